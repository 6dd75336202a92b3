import { startChainStub } from "./bench/realchain/stub.ts";
import { prepareHome } from "./bench/realchain/clis.ts";
import { adapterInvocation } from "./bench/realchain/direct_cli.ts";
const stub = await startChainStub({});
const home = await Deno.makeTempDir();
await prepareHome(home);
const bin = Deno.env.get("HOME") + "/.cache/council-gateway-test/node_modules/@google/gemini-cli/bundle/gemini.js";
const inv = adapterInvocation("gemini", stub.origin, home);
const extra = JSON.parse(Deno.args[0] ?? "{}");
if (Deno.args[1]) await Deno.writeTextFile(home + "/.gemini/settings.json", Deno.args[1]);
const e = () => performance.timeOrigin + performance.now();
const firsts: number[] = [];
for (let i = 0; i < Number(Deno.env.get("N") ?? 5); i++) {
  const t0 = e(); const n0 = stub.records.length;
  const child = new Deno.Command("node", { args: [...(Deno.env.get("PROF") ? ["--cpu-prof", "--cpu-prof-dir=/tmp/gprof"] : []), bin, ...inv.args], env: { PATH: Deno.env.get("PATH")!, ...inv.env, ...extra }, clearEnv: true, stdin: "piped", stdout: "null", stderr: "null", cwd: home }).spawn();
  const w = child.stdin.getWriter(); await w.write(new TextEncoder().encode("\nSay hello")); await w.close();
  await child.status;
  const r = stub.records.slice(n0)[0];
  firsts.push(r ? r.arrivedAt - t0 : NaN);
}
firsts.sort((a, b) => a - b);
console.log("first request median", firsts[Math.floor(firsts.length / 2)].toFixed(0), firsts.map((x) => x.toFixed(0)).join(" "));
Deno.exit(0);
