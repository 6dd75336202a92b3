/**
 * Client faults on the real gateway (a subprocess): a client that disconnects during each phase
 * of a turn (fan-out judge, children, synthesizer, tool selection) gets every child of the turn
 * killed and leaves the session's counters consistent; SIGTERM to the gateway mid-turn kills
 * the turn's children (even one that ignores SIGTERM) and exits 0 within the grace period.
 *
 * Consistent counters, as the gateway defines them: a disconnected turn counts as a turn of
 * its session (it was started, its children ran), and the spend of every call that ran, the
 * killed ones included, is added to the session; the turn's ledger line says `cancelled`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type LedgerEntry, readLedger } from "../../src/ledger/mod.ts";
import { fakeAgent, type FakeKnobs, type FakeRule, readFakeLog } from "../fixtures/fakes.ts";
import { CLAUDE_TOOLS } from "../support/host_bodies.ts";
import {
  assertAllGone,
  type GatewayProcess,
  readStream,
  spawnGateway,
} from "../support/faulty_gateway.ts";
import { tempDir } from "../support/git_repos.ts";
import { eventually } from "../support/wait.ts";

const JUDGE = '"fanOut": true or false';
const SYNTH = "=== Candidate A ===";
const SELECT = "=== Proposed next steps ===";

/** Each agent's scripted behaviour: markers in the user's ask pick the phase that hangs. */
function agentRules(name: string, synthesizer: boolean): FakeRule[] {
  const proposal = JSON.stringify({
    kind: "tool",
    name: "Read",
    input: { file_path: `${name}.txt` },
  });
  return [
    ...(synthesizer
      ? [
        { match: `PHASE-JUDGE.*${JUDGE}`, flags: "s", mode: "hang" },
        { match: JUDGE, reply: '{"fanOut": true, "reason": "worth several attempts"}' },
        { match: `PHASE-SYNTH.*${SYNTH}`, flags: "s", mode: "hang" },
        { match: SYNTH, reply: "The synthesized answer." },
        { match: SELECT, mode: "hang" },
      ]
      : []),
    { match: "PHASE-CHILDREN", mode: "hang" },
    { match: "PHASE-TOOL", reply: proposal },
  ];
}

function agentEntry(name: string, log: string, synthesizer: boolean, knobs: FakeKnobs = {}) {
  return fakeAgent("claude", {
    reply: `${name}'s answer`,
    rules: agentRules(name, synthesizer),
    log,
    ...knobs,
  }, { name });
}

function ledgerLines(path: string): LedgerEntry[] {
  const lines: LedgerEntry[] = [];
  readLedger(path, (entry) => lines.push(entry));
  return lines;
}

/** A conversation of one session (same system prompt and first message) ending in `ask`. */
function sessionBody(ask: string, tools = false) {
  return {
    model: "claude-opus-4-8",
    max_tokens: 1024,
    stream: true,
    system: "You help with the parser project.",
    messages: [
      { role: "user", content: "Let us work on the parser project today." },
      { role: "assistant", content: "Sure, what first?" },
      { role: "user", content: ask },
    ],
    ...(tools ? { tools: CLAUDE_TOOLS } : {}),
  };
}

const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;

Deno.test({
  name:
    "client faults: a disconnect in each phase kills the turn's children; counters stay consistent",
  ignore: Deno.build.os === "windows",
  fn: async (t) => {
    await using scratch = await tempDir("cg-client-faults-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const ledger = join(dir, "ledger.jsonl");
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "auto",
      maxTurns: 5,
      ledger,
      defaultAgents: [
        agentEntry("alpha", log, true),
        agentEntry("beta", log, false),
        agentEntry("gamma", log, false),
      ],
    });

    /**
     * Starts a streaming turn, waits until `running` says the phase is under way (judged from
     * the fakes' log), disconnects, then waits for the turn's ledger line and checks that no
     * process the turn started is alive.
     */
    const disconnectDuring = async (
      ask: string,
      running: (prompts: string[]) => boolean,
      tools = false,
    ): Promise<LedgerEntry> => {
      const logged = (await readFakeLog(log)).length;
      const lines = ledgerLines(ledger).length;
      const client = new AbortController();
      const response = await fetch(`${gateway.origin}/v1/messages?beta=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(sessionBody(ask, tools)),
        signal: client.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      await reader.read(); // message_start: the turn has begun
      await eventually(async () => {
        const prompts = (await readFakeLog(log)).slice(logged).map((c) => c.prompt);
        return running(prompts) ? true : undefined;
      }, `phase of ${ask}`);
      client.abort();
      await reader.cancel().catch(() => {});
      const entry = await eventually(
        () => Promise.resolve(ledgerLines(ledger)[lines]),
        `ledger line of ${ask}`,
      );
      const pids = (await readFakeLog(log)).slice(logged).map((c) => c.pid);
      await assertAllGone(pids, ask);
      assert.equal(entry.cancelled, true, `${ask}: the turn is marked cancelled`);
      assert.equal(entry.counted, true, `${ask}: a disconnected turn counts as a turn`);
      return entry;
    };

    const roles = (entry: LedgerEntry) => entry.calls.map((c) => `${c.role}:${c.status}`).sort();
    const SYNTHESIZER_KILLED = ["child:ok", "child:ok", "child:ok", "judge:ok", "synth:aborted"];

    try {
      await t.step("during the fan-out judge", async () => {
        const entry = await disconnectDuring(
          "PHASE-JUDGE: redesign the tokenizer and explain why",
          (prompts) => prompts.some((p) => p.includes(JUDGE)),
        );
        assert.deepEqual(roles(entry), ["judge:aborted"], "no child starts after the disconnect");
      });

      await t.step("while the children work", async () => {
        const entry = await disconnectDuring(
          "PHASE-CHILDREN: redesign the tokenizer and explain why",
          (prompts) => prompts.filter((p) => p.includes("PHASE-CHILDREN")).length >= 4,
        );
        assert.deepEqual(roles(entry), [
          "child:aborted",
          "child:aborted",
          "child:aborted",
          "judge:ok",
        ]);
      });

      await t.step("while the synthesizer writes", async () => {
        const entry = await disconnectDuring(
          "PHASE-SYNTH: redesign the tokenizer and explain why",
          (prompts) => prompts.some((p) => p.includes(SYNTH)),
        );
        assert.deepEqual(roles(entry), SYNTHESIZER_KILLED);
      });

      await t.step("while the tool action is being chosen (before its emission)", async () => {
        const entry = await disconnectDuring(
          "PHASE-TOOL: read the file that configures the tokenizer",
          (prompts) => prompts.some((p) => p.includes(SELECT)),
          true,
        );
        assert.deepEqual(roles(entry), SYNTHESIZER_KILLED);
      });

      await t.step("the session's counters: every turn counted once, all spend added", async () => {
        // One more turn completes normally (turn 5 of 5), the next is capped.
        const done = async () => {
          const response = await fetch(`${gateway.origin}/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(sessionBody("Now summarise what we found, please.")),
          });
          return readStream(response.status, await response.text());
        };
        const fifth = await done();
        assert.ok(fifth.finished);
        assert.equal(fifth.answer, "The synthesized answer.");
        const capped = await done();
        assert.match(capped.answer, /maxTurns/);

        const lines = ledgerLines(ledger);
        assert.equal(lines.length, 6);
        assert.equal(new Set(lines.map((l) => l.session)).size, 1, "one session throughout");
        assert.deepEqual(lines.map((l) => l.sessionTurn), [1, 2, 3, 4, 5, 5]);
        assert.deepEqual(lines.map((l) => l.counted), [true, true, true, true, true, false]);
        let running = 0;
        for (const line of lines) {
          const calls = line.calls.reduce((sum, c) => sum + c.costUsd, 0);
          assert.ok(near(line.costUsd, calls), `turn ${line.turn}: ${line.costUsd} vs ${calls}`);
          running += line.costUsd;
          assert.ok(near(line.sessionUsd, running), `${line.sessionUsd} vs ${running}`);
        }
        // The killed calls are in the sums above at their settled (estimated) spend: zero for
        // one killed before it printed anything, else priced from its prompt and output.
        const killed = lines.flatMap((l) => l.calls).filter((c) => c.status === "aborted");
        assert.equal(killed.length, 6);
        assert.ok(killed.every((c) => c.estimated), JSON.stringify(killed));
      });
    } finally {
      const code = await gateway.stop();
      assert.equal(code, 0, gateway.lines().join("\n"));
    }
  },
});

/** Resolves with the exit code, or "running" if the gateway has not exited within `ms`. */
function exitWithin(gateway: GatewayProcess, ms: number): Promise<number | "running"> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    gateway.exited,
    new Promise<"running">((resolve) => (timer = setTimeout(() => resolve("running"), ms))),
  ]).finally(() => clearTimeout(timer));
}

Deno.test({
  name:
    "client faults: SIGTERM mid-turn kills the children (one ignores SIGTERM), exits 0 in the grace period, ledger kept",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "cg-sigterm-" });
    const log = join(dir, "fakes.log");
    const ledger = join(dir, "ledger.jsonl");
    const sigtermFile = join(dir, "sigterm.log");
    const pidFile = join(dir, "grandchildren.pids");
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      ledger,
      defaultAgents: [
        agentEntry("alpha", log, true, { modes: ["hang", "ignore-sigterm"], sigtermFile }),
        agentEntry("beta", log, false, { modes: ["hang", "grandchildren"], pidFile }),
      ],
    });
    const client = new AbortController();
    try {
      const reply = fetch(`${gateway.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(sessionBody("Explain the parser in depth.")),
        signal: client.signal,
      }).then((r) => r.text(), () => "");
      const calls = await eventually(async () => {
        const found = await readFakeLog(log);
        return found.length === 2 ? found : undefined;
      }, "both children running");
      const grandchildren = await eventually(async () => {
        const text = await Deno.readTextFile(pidFile).catch(() => "");
        const pids = text.split("\n").filter(Boolean).map(Number);
        return pids.length === 2 ? pids : undefined;
      }, "grandchildren started");

      const signalled = performance.now();
      gateway.kill("SIGTERM");
      // Grace: 3 s for in-flight turns, then they are cancelled (a child has 2 s between
      // SIGTERM and SIGKILL); the bound adds slack for a loaded machine.
      const code = await exitWithin(gateway, 15_000);
      const seconds = (performance.now() - signalled) / 1000;
      assert.equal(
        code,
        0,
        `exit ${code} after ${seconds.toFixed(1)} s:\n${gateway.lines().join("\n")}`,
      );
      await reply;
      await assertAllGone([...calls.map((c) => c.pid), ...grandchildren], "after SIGTERM");
      assert.match(await Deno.readTextFile(sigtermFile), /SIGTERM/);

      const lines = ledgerLines(ledger);
      assert.equal(lines.length, 1, "the cancelled turn was recorded before exit");
      assert.equal(lines[0].cancelled, true);
      assert.deepEqual(lines[0].calls.map((c) => c.status), ["aborted", "aborted"]);
      const logText = gateway.lines().join("\n");
      assert.match(logText, /shutting down: cancelling in-flight turns/);
      assert.match(logText, /stopped$/m);
    } finally {
      client.abort();
      gateway.kill("SIGKILL");
      await gateway.exited;
      // A grandchild killed with the gateway may still be ending: the clean-up is best effort.
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
