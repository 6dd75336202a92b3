/**
 * Reliability test helpers: the real gateway as a subprocess (pid known, for RSS and signals),
 * fault-injecting agents whose misbehaviour a test switches per turn, the process table, and
 * a small streaming client for both protocols.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

import { fakeCommandPath, fakeEnv, type FakeKnobs } from "../fixtures/fakes.ts";
import { parseSse } from "./sse_reader.ts";
import { eventually } from "./wait.ts";

// ---- the process table ------------------------------------------------------------------

export interface ProcessRow {
  pid: number;
  pgid: number;
  stat: string;
  args: string;
}

/** `ps -eo pid,pgid,stat,args` (reading /proc directly needs more than the test permissions). */
export async function processTable(): Promise<ProcessRow[]> {
  const out = await new Deno.Command("ps", {
    args: ["-eo", "pid=,pgid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/.exec(line);
    return match
      ? [{ pid: Number(match[1]), pgid: Number(match[2]), stat: match[3], args: match[4] }]
      : [];
  });
}

/**
 * Live processes among `pids` or in their process groups. Zombies count as gone: in this
 * sandbox nobody reaps orphans, and a zombie holds no resources but its table entry.
 */
export async function survivors(pids: readonly number[]): Promise<ProcessRow[]> {
  const wanted = new Set(pids);
  return (await processTable()).filter((row) =>
    (wanted.has(row.pid) || wanted.has(row.pgid)) && !row.stat.startsWith("Z")
  );
}

/**
 * Asserts that none of `pids` (nor anything in their groups) is alive. A killed process may
 * need a moment to leave the table, so this polls briefly (bounded) before failing.
 */
export async function assertAllGone(pids: readonly number[], what: string): Promise<void> {
  assert.ok(pids.length > 0, `${what}: no pids recorded`);
  let alive: ProcessRow[] = [];
  const gone = await eventually(
    async () => (alive = await survivors(pids)).length === 0,
    what,
    2_000,
  )
    .catch(() => false);
  if (!gone) {
    assert.fail(`${what}: still alive:\n${alive.map((r) => JSON.stringify(r)).join("\n")}`);
  }
}

/** Resident set size in KiB (`ps -o rss=`), NaN once the process is gone. */
export async function rssKb(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "rss=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  return text ? Number(text) : NaN;
}

/** Samples `pid`'s RSS every `everyMs` until stopped; `stop()` gives the peak (KiB). */
export function sampleRss(pid: number, everyMs = 50): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const kb = await rssKb(pid);
      if (kb > peak) peak = kb;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

// ---- fault-injecting agents -------------------------------------------------------------

/**
 * A wrapper around a fake CLI: it records its pid (= its process group, the gateway starts
 * every child detached) in `<dir>/pids`, then sources `<dir>/<agent>.env` if present — the
 * test writes `export FAKE_MODE=…` there to make that agent misbehave on the next turns —
 * and execs the fake.
 */
const WRAPPER = `#!/bin/sh
echo "$$" >> "$FAULT_DIR/pids"
if [ -f "$FAULT_DIR/$FAULT_AGENT.env" ]; then . "$FAULT_DIR/$FAULT_AGENT.env"; fi
exec "$FAULT_CLI" "$@"
`;

export class FaultBox {
  constructor(readonly dir: string) {}

  static async create(dir: string): Promise<FaultBox> {
    const box = new FaultBox(dir);
    await Deno.writeTextFile(box.wrapper, WRAPPER, { mode: 0o755 });
    await Deno.writeTextFile(join(dir, "pids"), "");
    return box;
  }

  get wrapper(): string {
    return join(this.dir, "fault-wrapper.sh");
  }

  /** A claude-format agent entry (config YAML shape) running through the wrapper. */
  agent(name: string, knobs: FakeKnobs = {}, extra: Record<string, unknown> = {}) {
    return {
      name,
      runner: "claude",
      model: "claude-opus-4-8",
      command: this.wrapper,
      env: {
        ...fakeEnv(knobs),
        FAULT_DIR: this.dir,
        FAULT_AGENT: name,
        FAULT_CLI: fakeCommandPath("claude"),
      },
      ...extra,
    };
  }

  /** Makes `agent` misbehave with `knobs` (until `heal`). */
  async inject(agent: string, knobs: FakeKnobs): Promise<void> {
    const exports = Object.entries(fakeEnv(knobs))
      .map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`);
    await Deno.writeTextFile(join(this.dir, `${agent}.env`), `${exports.join("\n")}\n`);
  }

  async heal(agent: string): Promise<void> {
    await Deno.remove(join(this.dir, `${agent}.env`)).catch(() => {});
  }

  /** Every child pid (= process group) started so far, in start order. */
  async pids(): Promise<number[]> {
    const text = await Deno.readTextFile(join(this.dir, "pids"));
    return text.split("\n").filter(Boolean).map(Number);
  }
}

// ---- the gateway as a subprocess (shared with the e2e tests) ----------------------------

export { type GatewayProcess, spawnGateway } from "./gateway_process.ts";

// ---- a streaming client for both protocols ----------------------------------------------

export interface StreamedReply {
  status: number;
  /** The progress channel's text (thinking block / reasoning summary). */
  progress: string;
  /** The answer channel's text. */
  answer: string;
  /** Event names in order. */
  events: string[];
  /** The terminal event arrived (message_stop / response.completed / response.failed). */
  finished: boolean;
  /** `response.failed`'s error message (Responses), if any. */
  failure?: string;
}

/** Reads a streaming Messages or Responses reply into its channels. */
export function readStream(status: number, body: string): StreamedReply {
  const reply: StreamedReply = {
    status,
    progress: "",
    answer: "",
    events: [],
    finished: false,
  };
  for (const { event, data } of parseSse(body)) {
    if (event === undefined || data === undefined) continue;
    reply.events.push(event);
    const delta = data.delta as Record<string, unknown> | string | undefined;
    if (event === "content_block_delta" && typeof delta === "object") {
      if (delta.type === "thinking_delta") reply.progress += String(delta.thinking);
      if (delta.type === "text_delta") reply.answer += String(delta.text);
    }
    if (event === "response.reasoning_summary_text.delta") reply.progress += String(delta);
    if (event === "response.output_text.delta") reply.answer += String(delta);
    if (["message_stop", "response.completed", "response.failed"].includes(event)) {
      reply.finished = true;
    }
    if (event === "response.failed") {
      const response = data.response as { error?: { message?: string } };
      reply.failure = response.error?.message;
    }
  }
  return reply;
}

export type Protocol = "messages" | "responses";

/** The body of a streaming request on `protocol` whose conversation opens with `ask`. */
export function streamingBody(protocol: Protocol, ask: string, system = "You are terse.") {
  return protocol === "messages"
    ? {
      model: "claude-opus-4-8",
      max_tokens: 1024,
      stream: true,
      system,
      messages: [{ role: "user", content: ask }],
    }
    : { model: "gpt-5.5", stream: true, instructions: system, input: ask };
}

/** One streaming turn, read to its end. */
export async function streamTurn(
  origin: string,
  protocol: Protocol,
  ask: string,
  init: RequestInit = {},
): Promise<StreamedReply> {
  const response = await fetch(`${origin}/v1/${protocol}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(streamingBody(protocol, ask)),
    ...init,
  });
  return readStream(response.status, await response.text());
}
