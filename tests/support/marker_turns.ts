/**
 * Turns that show cross-talk (issue 9 §4): a council of three `command` agents running the
 * marker fake (tests/fixtures/echo-marker), streaming turns over both protocols whose answers name
 * every turn marker their agents heard of, the check that a turn heard only of its own, and the
 * process readings a load run checks (open fds, leftover fake children).
 */
import { fileURLToPath } from "node:url";
import { SseDecoder } from "./sse_reader.ts";

export const MARKER_PREFIX = "LOAD-MARK-";
export const FAKE_PATH = fileURLToPath(new URL("../fixtures/echo-marker", import.meta.url));
const SYSTEM = "You are a terse assistant for load testing.";

export type Protocol = "messages" | "responses";

/** Three `command` agents running the marker fake (at `fake`); entry 0 also synthesizes. */
export function loadConfig(
  childMs: number,
  synthMs: number,
  fake = FAKE_PATH,
): Record<string, unknown> {
  const env = {
    LOAD_CHILD_SLEEP: String(childMs / 1000),
    LOAD_SYNTH_SLEEP: String(synthMs / 1000),
  };
  return {
    fanOutPolicy: "always",
    councilSize: 3,
    maxTurns: 1_000_000,
    // The load is the point: no global limit may queue or refuse its concurrent turns.
    maxConcurrentTurns: 1000,
    defaultAgents: ["a", "b", "c"].map((name) => ({
      name,
      runner: "command",
      model: "load",
      command: fake,
      env,
    })),
  };
}

/** A marker unique to one turn of one run: `LOAD-MARK-` + lower-case letters and digits. */
export function newMarker(run: string, index: number): string {
  return `${MARKER_PREFIX}${run}t${index.toString(36)}`;
}

/** A streaming request opening its own session (the marker is in the first user message). */
export function turnBody(protocol: Protocol, marker: string): Record<string, unknown> {
  const ask = `Turn ${marker}: which turn is this?`;
  return protocol === "messages"
    ? {
      model: "svc-council",
      max_tokens: 1024,
      stream: true,
      system: SYSTEM,
      messages: [{ role: "user", content: ask }],
    }
    : { model: "svc-council", stream: true, instructions: SYSTEM, input: ask };
}

export interface LoadTurn {
  protocol: Protocol;
  marker: string;
  status: number;
  answer: string;
  wallMs: number;
  /** Why the turn failed (HTTP status, error event, no terminal event, network). */
  error?: string;
}

const TERMINAL: Record<Protocol, string> = {
  messages: "message_stop",
  responses: "response.completed",
};

/** The answer's text from one SSE frame of either protocol ("" when it carries none). */
function answerText(protocol: Protocol, event: string, data: string): string {
  if (protocol === "messages" && event === "content_block_delta") {
    const delta = JSON.parse(data).delta;
    return delta?.type === "text_delta" ? delta.text : "";
  }
  if (protocol === "responses" && event === "response.output_text.delta") {
    return JSON.parse(data).delta ?? "";
  }
  return "";
}

/** One streaming turn read to its end. Never throws. */
export async function loadTurn(
  origin: string,
  protocol: Protocol,
  marker: string,
  client?: Deno.HttpClient,
): Promise<LoadTurn> {
  const started = performance.now();
  const turn: LoadTurn = { protocol, marker, status: 0, answer: "", wallMs: 0 };
  let finished = false;
  try {
    const response = await fetch(`${origin}/v1/${protocol}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(turnBody(protocol, marker)),
      client,
    });
    turn.status = response.status;
    const parser = new SseDecoder();
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      for (const frame of parser.push(decoder.decode(chunk, { stream: true }))) {
        if (frame.event === TERMINAL[protocol]) finished = true;
        else if (frame.event === "error" || frame.event === "response.failed") {
          turn.error = `${frame.event}: ${frame.text.slice(0, 200)}`;
        } else turn.answer += answerText(protocol, frame.event ?? "message", frame.text);
      }
    }
    if (turn.status !== 200) turn.error ??= `HTTP ${turn.status}`;
    else if (!finished) turn.error ??= `no ${TERMINAL[protocol]}`;
  } catch (err) {
    turn.error = `request failed: ${(err as Error).message}`;
  }
  turn.wallMs = performance.now() - started;
  return turn;
}

/** Every load marker in a text, in order. */
export function markersIn(text: string): string[] {
  return text.match(/LOAD-MARK-[0-9a-z]*/g) ?? [];
}

/**
 * Why an answer shows cross-talk (or is not the synthesizer's), or undefined when it names
 * only its own marker: once from the conversation and once per candidate it synthesized.
 */
export function crossTalk(turn: LoadTurn): string | undefined {
  const markers = markersIn(turn.answer);
  const foreign = markers.filter((m) => m !== turn.marker);
  if (foreign.length) return `${turn.marker} heard of ${[...new Set(foreign)].join(", ")}`;
  if (!turn.answer.startsWith("answer:") || markers.length < 3) {
    return `${turn.marker}: not a synthesis of its candidates: ${JSON.stringify(turn.answer)}`;
  }
  return undefined;
}

/**
 * `count` turns at once, alternating Messages and Responses, on connections of their own
 * (closed afterwards, so the gateway's socket count returns to where it was).
 */
export async function concurrentTurns(
  origin: string,
  run: string,
  count: number,
): Promise<LoadTurn[]> {
  const client = Deno.createHttpClient({});
  try {
    return await Promise.all(Array.from({ length: count }, (_, i) => {
      const protocol = i % 2 === 0 ? "messages" : "responses";
      return loadTurn(origin, protocol, newMarker(run, i), client);
    }));
  } finally {
    client.close();
  }
}

/** Open file descriptors of a process (Linux: entries of /proc/<pid>/fd). */
export function fdCount(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

/** Processes still running the marker fake at `fake` (the gateway should have ended them). */
export async function leftoverFakes(fake = FAKE_PATH): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(fake) && !/^\s*\d+\s+Z/.test(line));
}
