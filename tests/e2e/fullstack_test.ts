/**
 * The whole product in one process: the official SDKs talk to the real server (`startServer`),
 * which runs the real council over real child processes (the project's fake CLIs).
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  type AgentConfig,
  type Config,
  type ConfigFile,
  nameAgents,
} from "../../src/config/mod.ts";
import { configOf } from "../support/test_config.ts";
import { tempDir } from "../support/git_repos.ts";
import { type RunningServer, startServer } from "../../src/server/wiring.ts";
import { fakeAgent, type FakeKnobs, readFakeLog } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";

/** Matches only the synthesizer's prompt on answer turns. */
const SYNTH = "=== Candidate A ===";
/** Matches only the synthesizer's prompt on action turns. */
const SELECT = "=== Proposed next steps ===";

const READ_TOOL = {
  name: "Read",
  description: "Reads a file.",
  input_schema: {
    type: "object" as const,
    properties: { file_path: { type: "string" } },
    required: ["file_path"],
    additionalProperties: false,
  },
};

function configWith(agents: AgentConfig[], file: ConfigFile = {}): Config {
  return configOf({ port: 0, fanOutPolicy: "always", ...file }, nameAgents(agents));
}

function threeFakes(log: string, knobs: Partial<Record<"claude" | "codex" | "gemini", FakeKnobs>>) {
  return [
    fakeAgent("claude", { reply: "claude draft", log, ...knobs.claude }, { name: "claude" }),
    fakeAgent("codex", { reply: "codex draft", log, ...knobs.codex }, { name: "codex" }),
    fakeAgent("gemini", { reply: "gemini draft", log, ...knobs.gemini }, { name: "gemini" }),
  ];
}

function gateway(config: Config): RunningServer & AsyncDisposable {
  const server = startServer(config, { graceMs: 0, abortGraceMs: 3000 });
  return Object.assign(server, {
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  });
}

function anthropic(server: RunningServer) {
  return new Anthropic({ baseURL: server.origin, apiKey: "unused", maxRetries: 0 });
}

function openai(server: RunningServer) {
  return new OpenAI({ baseURL: `${server.origin}/v1`, apiKey: "unused", maxRetries: 0 });
}

function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

const user = (text: string) => ({ role: "user" as const, content: text });

Deno.test("fullstack: Anthropic SDK messages.create — a fanned-out answer turn", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  await using server = gateway(configWith(threeFakes(log, {
    claude: { rules: [{ match: SYNTH, reply: "Synthesized: 42." }] },
  })));
  const message = await anthropic(server).messages.create({
    model: "claude-opus-4-8",
    max_tokens: 1000,
    messages: [user("What is 6 times 7?")],
  });
  assert.equal(message.stop_reason, "end_turn");
  assert.deepEqual(message.content.map((b) => b.type), ["text"]);
  assert.equal((message.content[0] as { text: string }).text, "Synthesized: 42.");
  assert.ok(message.usage.input_tokens > 0);
  assert.ok(message.usage.output_tokens > 0);
  assert.equal((await readFakeLog(log)).length, 4, "three children and the synthesizer");
});

Deno.test("fullstack: Anthropic SDK stream — tool turn gives the exact tool_use after progress", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  const read = JSON.stringify({
    kind: "tool",
    name: "Read",
    input: { file_path: "/etc/hostname" },
  });
  const ls = JSON.stringify({ kind: "tool", name: "Read", input: { file_path: "/etc/hosts" } });
  await using server = gateway(configWith(threeFakes(log, {
    claude: { reply: read, rules: [{ match: SELECT, reply: '{"choose": 2}' }] },
    codex: { reply: ls },
    gemini: { reply: ls },
  })));
  const stream = anthropic(server).messages.stream({
    model: "claude-opus-4-8",
    max_tokens: 1000,
    tools: [READ_TOOL],
    messages: [user("Show me a file")],
  });
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, "tool_use");
  assert.deepEqual(final.content.map((b) => b.type), ["thinking", "tool_use"]);
  const tool = final.content[1] as { name: string; input: unknown; id: string };
  assert.equal(tool.name, "Read");
  // Proposals are numbered in order of first appearance: 1 = claude's, 2 = the others'.
  assert.deepEqual(tool.input, { file_path: "/etc/hosts" });
  assert.match(tool.id, /^toolu_/);
  const thinking = (final.content[0] as { thinking: string }).thinking;
  assert.match(thinking, /council: 3 agents/);
});

Deno.test("fullstack: progress off → the answer is block 0, a long answer streamed live before the synthesizer exits", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  // Long enough to stream live: an agent's shorter text is held (it may be narration).
  const reply = "one two three four five six seven eight nine ten ".repeat(10);
  await using server = gateway(configWith(
    threeFakes(log, {
      claude: {
        rules: [{ match: SYNTH, reply, chunkDelayMs: 300, chunkChars: reply.length - 10 }],
      },
    }),
    { streamProgress: false },
  ));
  const stream = anthropic(server).messages.stream({
    model: "claude-opus-4-8",
    max_tokens: 1000,
    messages: [user("count")],
  });
  const firstText = new Promise<number>((resolve) => {
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        resolve(event.index);
      }
    });
  });
  const index = await firstText;
  assert.equal(index, 0, "no progress block: the answer is at index 0");
  // The synthesizer (the call whose prompt holds the candidates) is still running.
  const synth = (await readFakeLog(log)).find((c) => c.prompt.includes(SYNTH));
  assert.ok(synth, "the synthesizer was invoked");
  assert.ok(isAlive(synth.pid), "the first text_delta arrived while the synthesizer ran");
  const final = await stream.finalMessage();
  assert.deepEqual(final.content.map((b) => b.type), ["text"]);
  assert.equal((final.content[0] as { text: string }).text, reply);
});

Deno.test("fullstack: pings keep a silent stream alive while the synthesizer thinks", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  await using server = gateway(configWith(
    threeFakes(log, { claude: { rules: [{ match: SYNTH, reply: "done", delayMs: 400 }] } }),
    { keepAliveMs: 50 },
  ));
  const response = await fetch(`${server.origin}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-4-8",
      max_tokens: 100,
      stream: true,
      messages: [user("think")],
    }),
  });
  const text = await response.text();
  const events = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  assert.equal(events[0], "message_start");
  assert.deepEqual(events.slice(-2), ["message_delta", "message_stop"]);
  // A ping between the progress block's last line and the answer's first delta.
  const answerStart = events.lastIndexOf("content_block_start");
  assert.ok(events.slice(1, answerStart).includes("ping"), events.join(","));
});

Deno.test("fullstack: a client that disconnects mid-turn gets every child killed", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  const hang: FakeKnobs = { modes: ["hang"] };
  await using server = gateway(
    configWith(threeFakes(log, { claude: hang, codex: hang, gemini: hang })),
  );
  const controller = new AbortController();
  const response = await fetch(`${server.origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", max_tokens: 10, stream: true, messages: [user("hang")] }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  await reader.read(); // message_start: the turn is running
  await eventually(async () => (await readFakeLog(log).catch(() => [])).length === 3, "3 children");
  const pids = (await readFakeLog(log)).map((c) => c.pid);
  assert.ok(pids.every(isAlive));
  controller.abort();
  await reader.cancel().catch(() => {});
  await eventually(() => pids.every((pid) => !isAlive(pid)), "children killed after disconnect");
});

Deno.test("fullstack: the session cap answers normally, streamed and not", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  await using server = gateway(configWith(
    [fakeAgent("claude", { reply: "first answer", log })],
    { maxTurns: 1, fanOutPolicy: "never" },
  ));
  const client = anthropic(server);
  const body = { model: "claude-opus-4-8", max_tokens: 100, messages: [user("same session")] };
  const first = await client.messages.create(body);
  assert.equal((first.content[0] as { text: string }).text, "first answer");
  const capped = await client.messages.create(body);
  assert.equal(capped.stop_reason, "end_turn");
  assert.match((capped.content[0] as { text: string }).text, /maxTurns/);
  const streamed = await client.messages.stream(body).finalMessage();
  assert.match((streamed.content.at(-1) as { text: string }).text, /maxTurns/);
  assert.equal((await readFakeLog(log)).length, 1, "no council ran at the cap");
});

Deno.test("fullstack: OpenAI SDK responses — create and stream, function tools never yield a function_call", async () => {
  // Declared before the server, so removed after its shutdown has ended every child.
  await using dir = await tempDir("cg-fullstack-");
  const log = `${dir.path}/fakes.log`;
  await using server = gateway(configWith(threeFakes(log, {
    claude: { rules: [{ match: SYNTH, reply: "Responses synthesized." }] },
  })));
  const client = openai(server);
  const tools = [{
    type: "function" as const,
    name: "exec_command",
    description: "Runs a command",
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
    strict: false,
  }];
  const created = await client.responses.create({ model: "gpt-5.5", input: "hi", tools });
  assert.equal(created.status, "completed");
  assert.equal(created.output_text, "Responses synthesized.");
  assert.ok(created.output.every((item) => item.type !== "function_call"));

  const stream = client.responses.stream({ model: "gpt-5.5", input: "hi again", tools });
  const final = await stream.finalResponse();
  assert.deepEqual(final.output.map((item) => item.type), ["reasoning", "message"]);
  assert.equal(final.output_text, "Responses synthesized.");
  assert.ok(final.usage && final.usage.total_tokens > 0);
});

Deno.test("fullstack: every child failing to start → a completed response naming the cause", async () => {
  const missing = (name: string): AgentConfig => ({
    name,
    runner: "claude",
    model: "m",
    command: `/nonexistent/${name}`,
    args: [],
    env: {},
    timeoutMs: 10_000,
  });
  await using server = gateway(configWith([missing("alpha"), missing("beta")]));
  const response = await fetch(`${server.origin}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5.5", input: "hi", stream: true }),
  });
  const frames = (await response.text()).split("\n").filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
  const last = frames.at(-1);
  assert.equal(last.type, "response.completed");
  const text = last.response.output.find((i: { type: string }) => i.type === "message")
    .content[0].text;
  assert.match(text, /alpha: .*not found/);
  assert.match(text, /beta: .*not found/);
});
