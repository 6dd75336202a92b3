/**
 * Compaction is recognised in the shapes Claude Code 2.1.332 and Codex 0.171.0 send (labelled or
 * not) and runs one child: agent 0, the synthesizer, on its configured model, no directive.
 */
import assert from "node:assert/strict";
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
import { claudeCompaction332, codexCompaction171 } from "../../support/compaction_bodies.ts";
import { claudeMain, codexMain, type HostRequest } from "../../support/housekeeping_bodies.ts";
import { testConfig } from "../../support/scripted_agents.ts";

function claudeRequest({ headers, body }: HostRequest): Promise<TurnRequest> {
  const hints = messagesHints(new Headers(headers), body);
  return newTurnRequest(messagesTurnInput(MessagesRequestSchema.parse(body), undefined, hints));
}

function codexRequest({ headers, body }: HostRequest): Promise<TurnRequest> {
  const hints = responsesHints(new Headers(headers), body);
  return newTurnRequest(responsesTurnInput(ResponsesRequestSchema.parse(body), undefined, hints));
}

/** The plan of a compaction: one child, agent 0, its own model, no directive, said so. */
function assertSynthesizerOnly(request: TurnRequest, why: RegExp) {
  assert.equal(request.traffic?.compaction, true, JSON.stringify(request.traffic));
  assert.equal(request.traffic?.housekeeping, true);
  assert.match(request.traffic!.reason, why);
  assert.deepEqual(request.tools, [], "a summary is text, never a tool call");
  const config = testConfig({ fanOutPolicy: "always", councilSize: 3 });
  const plan = planTurn(request, config);
  assert.equal(plan.kind, "single");
  if (plan.kind !== "single") return;
  assert.equal(plan.child.agentIndex, 0);
  assert.equal(plan.child.agent.name, config.defaultAgents[0].name);
  assert.equal(plan.child.model, undefined, "the synthesizer's own model, not a cheap one");
  assert.equal(plan.child.directive, false);
  assert.match(plan.reason, /^compaction \(.+\): one agent, the synthesizer$/);
}

Deno.test("compaction: Claude Code 2.1.332's /compact and auto-compact by their hint headers", async () => {
  for (const trigger of ["manual", "auto"] as const) {
    const request = await claudeRequest(claudeCompaction332(trigger, true));
    assertSynthesizerOnly(
      request,
      new RegExp(`^x-claude-code-request-class: compaction \\(${trigger}\\)$`),
    );
  }
});

Deno.test("compaction: Claude Code 2.1.332's compaction without hint headers, by its shape", async () => {
  for (const trigger of ["manual", "auto"] as const) {
    const request = await claudeRequest(claudeCompaction332(trigger, false));
    assertSynthesizerOnly(request, /^a compaction request \(summary, no tools\)$/);
  }
});

Deno.test("compaction: the trigger header alone marks a compaction", async () => {
  const { headers, body } = claudeCompaction332("auto", true);
  delete headers["x-claude-code-request-class"];
  const request = await claudeRequest({ headers, body });
  assertSynthesizerOnly(request, /^x-claude-code-compaction: auto$/);
});

Deno.test("compaction: Codex 0.171.0's compaction with request_kind in its turn metadata", async () => {
  const request = await codexRequest(codexCompaction171(true));
  assertSynthesizerOnly(request, /^x-codex-turn-metadata request_kind: compaction$/);
});

Deno.test("compaction: Codex's compaction without request_kind (thread_source user), by its ask and no tools", async () => {
  const request = await codexRequest(codexCompaction171(false));
  assertSynthesizerOnly(request, /^a compaction request \(context checkpoint, no tools\)$/);
});

Deno.test("compaction: main turns stay council turns; the checkpoint phrase with tools is not one", async () => {
  const claude = await claudeRequest(claudeMain("Summarise what we did so far, then fix the bug"));
  assert.notEqual(claude.traffic?.compaction, true);
  assert.equal(planTurn(claude, testConfig()).kind, "fanout");
  const codex = await codexRequest(codexMain("Explain what a context checkpoint compaction is"));
  assert.notEqual(codex.traffic?.compaction, true);
  const { headers, body } = codexCompaction171(false);
  const withTools = await codexRequest({
    headers,
    body: { ...body, tools: [{ type: "function", name: "exec_command", parameters: {} }] },
  });
  assert.notEqual(withTools.traffic?.compaction, true, "a user turn may quote the phrase");
});

Deno.test("compaction: a cheap model name does not send a compaction to a cheap agent", async () => {
  const { headers, body } = claudeCompaction332("auto", true);
  const request = await claudeRequest({
    headers,
    body: { ...body, model: "claude-haiku-4-5-20251001" },
  });
  assertSynthesizerOnly(request, /compaction/);
});
