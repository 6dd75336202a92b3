/**
 * Housekeeping recognition on requests of the shapes the real hosts send: the host's own label
 * (Claude Code's request class, Codex's turn metadata) decides; without one, the shape does.
 */
import assert from "node:assert/strict";
import { classifyTraffic } from "../../../src/council/request/housekeeping.ts";
import { planTurn } from "../../../src/council/plan/plan.ts";
import { newTurnRequest } from "../../../src/council/request/turn_request.ts";
import type { TurnRequest } from "../../../src/council/types.ts";
import { messagesHints } from "../../../src/protocol/messages/hints.ts";
import {
  MessagesRequestSchema,
  messagesTurnInput,
} from "../../../src/protocol/messages/request.ts";
import { responsesHints } from "../../../src/protocol/responses/hints.ts";
import {
  ResponsesRequestSchema,
  responsesTurnInput,
} from "../../../src/protocol/responses/request.ts";
import { codexInput } from "../../support/host_bodies.ts";
import {
  claudeCompaction,
  claudeMain,
  claudeTitle,
  codexHeaders,
  codexMain,
  codexSolBody,
  codexTitle,
  type HostRequest,
} from "../../support/housekeeping_bodies.ts";
import { testConfig } from "../../support/scripted_agents.ts";

function claudeRequest({ headers, body }: HostRequest): Promise<TurnRequest> {
  const hints = messagesHints(new Headers(headers), body);
  const input = messagesTurnInput(MessagesRequestSchema.parse(body), undefined, hints);
  return newTurnRequest(input);
}

function codexRequest({ headers, body }: HostRequest): Promise<TurnRequest> {
  const hints = responsesHints(new Headers(headers), body);
  const input = responsesTurnInput(ResponsesRequestSchema.parse(body), undefined, hints);
  return newTurnRequest(input);
}

const PROMPT = "Why does the importer drop rows with an empty date column?";

Deno.test("housekeeping: Claude Code 2.1.330's title request with its hint header (auxiliary)", async () => {
  const request = await claudeRequest(claudeTitle(PROMPT, { hint: true }));
  assert.deepEqual(request.traffic, {
    housekeeping: true,
    reason: "x-claude-code-request-class: auxiliary",
  });
});

Deno.test("housekeeping: Claude Code's title request without hint headers, by its shape (2.1.330 and 2.1.197)", async () => {
  for (const old of [false, true]) {
    const request = await claudeRequest(claudeTitle(PROMPT, { old }));
    assert.equal(request.traffic?.housekeeping, true, `old=${old}`);
    assert.match(request.traffic!.reason, /short JSON reply \(title\) with no tools/);
  }
});

Deno.test("housekeeping: Claude Code's main request is a council turn, with or without the hint", async () => {
  const labelled = await claudeRequest(claudeMain(PROMPT, true));
  assert.deepEqual(labelled.traffic, {
    housekeeping: false,
    reason: "x-claude-code-request-class: main",
  });
  assert.equal(labelled.tools.length, 2);
  const plain = await claudeRequest(claudeMain(PROMPT));
  assert.equal(plain.traffic?.housekeeping, false);
  // A main turn that merely mentions a title or a summary is still the user's work.
  const mentions = await claudeRequest(
    claudeMain("Write a summary of this session's changes into CHANGELOG.md with a title"),
  );
  assert.equal(mentions.traffic?.housekeeping, false);
});

Deno.test("housekeeping: compaction, labelled or by its shape, loses its tools (the host wants text)", async () => {
  for (const hint of [true, false]) {
    const request = await claudeRequest(claudeCompaction(hint));
    assert.equal(request.traffic?.housekeeping, true, `hint=${hint}`);
    assert.match(
      request.traffic!.reason,
      hint ? /request-class: compaction/ : /compaction request \(summary, no tools\)/,
    );
    assert.deepEqual(request.tools, [], "answered as text, never a tool call");
  }
});

Deno.test("housekeeping: other Claude Code request classes are housekeeping; subagent and workflow are work", async () => {
  for (
    const [requestClass, housekeeping] of [
      ["side_reply", true],
      ["auxiliary", true],
      ["subagent", false],
      ["workflow", false],
    ] as const
  ) {
    const { body, headers } = claudeMain(PROMPT);
    const request = await claudeRequest({
      body,
      headers: { ...headers, "x-claude-code-request-class": requestClass },
    });
    assert.equal(request.traffic?.housekeeping, housekeeping, requestClass);
  }
});

Deno.test("housekeeping: Codex's title thread by its turn metadata, and by its shape without it", async () => {
  const labelled = await codexRequest(codexTitle(PROMPT));
  assert.deepEqual(labelled.traffic, {
    housekeeping: true,
    reason: "x-codex-turn-metadata thread_source: thread_title",
  });
  const bare = await codexRequest(codexTitle(PROMPT, false));
  assert.equal(bare.traffic?.housekeeping, true);
  assert.match(bare.traffic!.reason, /short JSON reply \(title\)/);
});

Deno.test("housekeeping: Codex's user turn is a council turn, even when it demands a JSON reply", async () => {
  const main = await codexRequest(codexMain(PROMPT));
  assert.deepEqual(main.traffic, {
    housekeeping: false,
    reason: "x-codex-turn-metadata thread_source: user",
  });
  // `codex exec --output-schema`: a user turn with a schema is still the user's work.
  const schema = {
    type: "json_schema",
    name: "codex_output_schema",
    schema: { type: "object", properties: { verdict: { type: "string" } } },
  };
  const structured = await codexRequest(codexMain(PROMPT, { text: { format: schema } }));
  assert.equal(structured.traffic?.housekeeping, false);
});

Deno.test("housekeeping: a Codex request kind other than a turn is housekeeping", async () => {
  const headers = {
    ...codexHeaders(),
    "x-codex-turn-metadata": JSON.stringify({
      thread_source: "user",
      request_kind: "memory_consolidation",
    }),
  };
  const request = await codexRequest({ headers, body: codexSolBody(codexInput(PROMPT)) });
  assert.deepEqual(request.traffic, {
    housekeeping: true,
    reason: "x-codex-turn-metadata request_kind: memory_consolidation",
  });
});

Deno.test("housekeeping: shape rules on tool-less asks — titles, summaries, topic checks, one-line demands", () => {
  const ask = (text: string, system = "You are helpful.") =>
    classifyTraffic({ system, transcript: [{ kind: "user", text }], tools: [] });
  assert.equal(ask("Tell me how B-trees keep themselves balanced.").housekeeping, false);
  assert.equal(ask("Explain the trade-offs of optimistic locking.").housekeeping, false);
  assert.equal(ask("hi", "Summarise the conversation below in two sentences.").housekeeping, true);
  assert.equal(
    ask("Does this message begin a new topic? Answer with JSON.").housekeeping,
    true,
  );
  assert.equal(
    ask("Reply with only one word: is this message a question or a statement?").housekeeping,
    true,
  );
  // Tools declared: a one-line demand is not enough (real agents are asked to be terse too).
  const withTools = classifyTraffic({
    system: "",
    transcript: [{ kind: "user", text: "Reply with only one line: which file has the bug?" }],
    tools: [{ name: "Read", description: "", inputSchema: {} }],
  });
  assert.equal(withTools.housekeeping, false);
});

Deno.test("housekeeping: the plan runs one child pinned to the host's model, no directive", async () => {
  const settings = testConfig();
  const claude = planTurn(await claudeRequest(claudeTitle(PROMPT, { hint: true })), settings);
  assert.equal(claude.kind, "single");
  if (claude.kind !== "single") return;
  assert.equal(claude.child.agent.runner, "claude");
  assert.equal(claude.child.model, "claude-opus-5-5");
  assert.equal(claude.child.directive, false);
  assert.match(claude.reason, /^housekeeping \(x-claude-code-request-class: auxiliary\)/);

  const codex = planTurn(await codexRequest(codexTitle(PROMPT)), settings);
  assert.equal(codex.kind, "single");
  if (codex.kind !== "single") return;
  assert.equal(codex.child.agent.runner, "codex");
  assert.equal(codex.child.model, "gpt-6-sol");
  assert.equal(codex.child.directive, false);

  // The council's own ids are never pinned: the agent's configured model runs.
  const named = await claudeRequest(claudeTitle(PROMPT, { hint: true }));
  const council = planTurn({ ...named, model: "claude-council" }, settings);
  assert.equal(council.kind, "single");
  if (council.kind !== "single") return;
  assert.equal(council.child.model, undefined);
  assert.match(council.reason, /configured model/);
});

Deno.test("housekeeping: a main turn still goes to the fan-out policy", async () => {
  const plan = planTurn(await claudeRequest(claudeMain(PROMPT, true)), testConfig());
  assert.equal(plan.kind, "fanout");
});
