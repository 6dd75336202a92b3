/**
 * No child outlives the gateway: after a `kill -9` of the gateway its watchdog ends the
 * children's groups within seconds, and a gateway started after one whose watchdog died too
 * ends what it left running, found through the record of process groups in the state dir.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { type GatewayProcess, spawnGateway } from "../support/gateway_process.ts";
import { eventually, within } from "../support/wait.ts";
import { isGone } from "../support/agent_runner.ts";

const posix = Deno.build.os !== "windows";

/** A gateway whose one agent hangs, ignores SIGTERM and starts two grandchildren. */
async function hangingGateway(dir: string): Promise<GatewayProcess> {
  const agent = fakeAgent("claude", {
    modes: ["hang", "ignore-sigterm", "grandchildren"],
    log: join(dir, "fake.log"),
    pidFile: join(dir, "grandchildren"),
    grandchildStdio: "ignore",
  });
  return await spawnGateway(dir, {
    fanOutPolicy: "never",
    logLevel: "debug",
    defaultAgents: [agent],
  });
}

/** Replies still streaming; each ends with its gateway. */
const replies: Promise<unknown>[] = [];

/** Starts a turn and resolves with the pids of its child and grandchildren once all run. */
async function startTurn(gateway: GatewayProcess, dir: string): Promise<number[]> {
  // The reply is read, not cancelled: a client that goes away cancels the turn.
  const request = fetch(`${gateway.origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-4-8",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "take your time" }],
    }),
  });
  replies.push(request.then((res) => res.body?.pipeTo(new WritableStream())).catch(() => {}));
  return await eventually(async () => {
    const calls = await readFakeLog(join(dir, "fake.log"));
    const grandchildren = (await Deno.readTextFile(join(dir, "grandchildren")).catch(() => ""))
      .split("\n").filter(Boolean).map(Number);
    return calls.length === 1 && grandchildren.length === 2
      ? [calls[0].pid, ...grandchildren]
      : undefined;
  }, "the child and its grandchildren");
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  }
}

Deno.test({
  name: "orphans: after kill -9 of the gateway its children are gone within 5 s",
  ignore: !posix,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "e2e-orphans-" });
    let pids: number[] = [];
    try {
      const gateway = await hangingGateway(dir);
      pids = await startTurn(gateway, dir);
      assert.ok(pids.every((pid) => !isGone(pid)), "the children run");
      gateway.kill("SIGKILL");
      const killedAt = Date.now();
      await gateway.exited;
      await eventually(() => pids.every(isGone), "the children to end", 5_000);
      const ms = Date.now() - killedAt;
      assert.ok(ms <= 5_000, `the children ran ${ms} ms after the gateway died`);
    } finally {
      killAll(pids);
      await Promise.all(replies.splice(0));
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "orphans: a starting gateway ends what a killed one left running, not a live one's",
  ignore: !posix,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "e2e-orphans-" });
    const otherDir = join(dir, "other");
    await Deno.mkdir(otherDir);
    const pids: number[] = [];
    const gateways: GatewayProcess[] = [];
    try {
      // A gateway that stays up, sharing the state directory (HOME) through its own config dir.
      const alive = await hangingGateway(dir);
      gateways.push(alive);
      const alivePids = await startTurn(alive, dir);
      pids.push(...alivePids);
      await Deno.rename(join(dir, "fake.log"), join(otherDir, "fake.log"));
      await Deno.rename(join(dir, "grandchildren"), join(otherDir, "grandchildren"));

      const killed = await hangingGateway(dir);
      gateways.push(killed);
      const leftPids = await startTurn(killed, dir);
      pids.push(...leftPids);
      // Its watchdog stopped first, so nothing ends the children when the gateway dies.
      const line = await within(killed.waitForLine(/watchdog \d+ ends/), "the watchdog's pid");
      const watchdog = Number(/watchdog (\d+) ends/.exec(line)![1]);
      Deno.kill(watchdog, "SIGSTOP");
      killed.kill("SIGKILL");
      await killed.exited;
      Deno.kill(watchdog, "SIGKILL");
      assert.ok(leftPids.every((pid) => !isGone(pid)), "the killed gateway's children still run");

      const next = await spawnGateway(dir, { logLevel: "debug", defaultAgents: killedAgents(dir) });
      gateways.push(next);
      await within(
        next.waitForLine(/ended 1 process group\(s\) left running by 1 earlier gateway/),
        "the reaping gateway's log line",
      );
      await eventually(() => leftPids.every(isGone), "the leftovers to end", 5_000);
      assert.ok(alivePids.every((pid) => !isGone(pid)), "a live gateway's children are its own");
    } finally {
      for (const gateway of gateways) gateway.kill("SIGKILL");
      killAll(pids);
      await Promise.all(gateways.map((gateway) => gateway.exited));
      await Promise.all(replies.splice(0));
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** An agent for the gateway that reaps (it must have a CLI agent to keep a record at all). */
function killedAgents(dir: string) {
  return [fakeAgent("claude", { log: join(dir, "next.log") })];
}
