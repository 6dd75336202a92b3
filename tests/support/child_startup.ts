/**
 * How long a turn's isolated CLI children take to reach their upstream: for each child (named by
 * its worktree, `child-N`, which its CLI's prompt carries), the time from the turn's start to its
 * first model request, read from the fake vendor's records. On a session's later turns a child the
 * warm pool started ahead reaches its upstream without its CLI's start-up.
 *
 * Run as a script, it measures that with the real CLIs (installed as the real-CLI tests expect)
 * on a session of fanned-out answer turns through a gateway with the defaults a user gets:
 *   deno run -A tests/support/child_startup.ts [--root CHECKOUT] [--turns N] [--pause-ms MS]
 * (a user's pause between turns, in which a warm pool refills), and prints one JSON line per
 * turn: its wall and each child's API and delay, in ms.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { RecordedRequest } from "./fake_vendor/mod.ts";

/** Prompts of the synthesizer's calls carry one of these. */
const SYNTH_MARKS = ["Candidate replies", "Proposed next steps"];
const CHILD_PATH = /\/workspaces\/[^/\s"'\\]+\/(child-\d+)/;

/** Each isolated child's first model request after `startedAt` (the fake's clock), by child. */
export function childFirstRequests(
  requests: readonly RecordedRequest[],
  startedAt: number,
): Map<string, { api: string; delayMs: number }> {
  const firsts = new Map<string, { api: string; delayMs: number }>();
  for (const request of requests) {
    if (SYNTH_MARKS.some((mark) => request.prompt.includes(mark))) continue;
    const child = CHILD_PATH.exec(request.prompt)?.[1];
    if (!child || firsts.has(child) || request.arrivedAt < startedAt) continue;
    firsts.set(child, { api: request.api, delayMs: request.arrivedAt - startedAt });
  }
  return firsts;
}

async function measure(root: string | undefined, turns: number, pauseMs: number): Promise<void> {
  const { startFakeVendor } = await import("./fake_vendor/mod.ts");
  const { spawnGateway } = await import("./gateway_process.ts");
  const { gitRepo } = await import("./git_repos.ts");
  const { findClis, prepareHome } = await import("../../scripts/bench/realchain/clis.ts");
  const { cliMembers } = await import("../../scripts/bench/latency/profiles.ts");
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "cg-child-startup-" }));
  await using vendor = startFakeVendor({ answer: { text: "A short answer about notes.txt." } });
  try {
    const project = join(dir, "project");
    const home = join(dir, "home");
    await Deno.mkdir(project);
    await gitRepo(project, { "notes.txt": "remember the milk\n" });
    await prepareHome(home);
    const { found, missing } = await findClis();
    if (missing.length) console.error(`missing: ${missing.join("; ")}`);
    const members = cliMembers(found, vendor.origin, home);
    const gateway = await spawnGateway(
      join(dir),
      {
        host: "127.0.0.1",
        fanOutPolicy: "always",
        fanOutScope: "every-turn",
        councilSize: members.length,
        defaultAgents: members.map((m) => m.entry),
      },
      {},
      root ? { root, cwd: root } : {},
    );
    try {
      const messages: { role: string; content: string }[] = [];
      for (let turn = 1; turn <= turns; turn++) {
        if (turn > 1) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        messages.push({ role: "user", content: `Turn ${turn}: what is notes.txt for?` });
        const before = vendor.requests.length;
        const startedAt = performance.now();
        const response = await fetch(`${gateway.origin}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-claude-code-session-id": "s-1" },
          body: JSON.stringify({
            model: "svc-council",
            max_tokens: 1000,
            system: `You help with code.\n<env>\nPrimary working directory: ${project}\n</env>`,
            messages,
          }),
        });
        const body = await response.json();
        const wallMs = performance.now() - startedAt;
        messages.push({ role: "assistant", content: body.content?.[0]?.text ?? "" });
        const children = childFirstRequests(vendor.requests.slice(before), startedAt);
        console.log(JSON.stringify({
          turn,
          status: response.status,
          wallMs: Math.round(wallMs),
          children: Object.fromEntries(
            [...children].sort().map(([c, v]) => [c, { ...v, delayMs: Math.round(v.delayMs) }]),
          ),
        }));
      }
    } finally {
      await gateway.stop();
      if (Deno.env.get("CHILD_STARTUP_LOG")) console.error(gateway.lines().join("\n"));
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      root: { type: "string" },
      turns: { type: "string", default: "3" },
      "pause-ms": { type: "string", default: "8000" },
    },
  });
  await measure(values.root, Number(values.turns), Number(values["pause-ms"]));
}
