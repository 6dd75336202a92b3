/**
 * A turn's images and documents in the council: prompts mark each where it was sent, by the
 * label children get it under; children and the synthesizer get them, the judge does not; a
 * command child in a real council is told what it cannot see.
 */
import { promptText } from "../../../src/agents/prompt_text.ts";
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { turnAttachments } from "../../../src/council/prompt/turn_attachments.ts";
import { answerPrompt } from "../../../src/council/prompt/prompts.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import type { Attachment, TranscriptEntry } from "../../../src/council/types.ts";
import { newTurnRequest } from "../../../src/council/request/turn_request.ts";
import { fakeAgent, readFakeLog } from "../../fixtures/fakes.ts";
import { pdfBase64, PNG_4X3 } from "../../fixtures/images.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  testConfig,
  testRequest,
  withAgents,
} from "../../support/scripted_agents.ts";

const png: Attachment = {
  kind: "image",
  mediaType: "image/png",
  source: { type: "base64", data: PNG_4X3 },
};
const pdf: Attachment = {
  kind: "document",
  mediaType: "application/pdf",
  source: { type: "base64", data: pdfBase64() },
  name: "spec.pdf",
};

const TRANSCRIPT: TranscriptEntry[] = [
  { kind: "user", text: "Why does the page look like this?", attachments: [png] },
  { kind: "tool_call", id: "c1", name: "Read", input: { file_path: "/tmp/spec.pdf" } },
  { kind: "tool_result", id: "c1", text: "", attachments: [png, pdf], isError: false },
  { kind: "user", text: "Compare the screenshot with the spec and explain the difference." },
];

Deno.test("council attachments: the prompt marks each where it was sent, labelled in turn order", () => {
  const prompt = promptText(
    answerPrompt({ system: "", transcript: TRANSCRIPT }, false, { contextTokens: 100_000 }),
  );
  assert.ok(
    prompt.includes("[user]\nWhy does the page look like this?\n[image #1: image/png]"),
    prompt,
  );
  assert.ok(
    prompt.includes(
      "[result of call c1]\n[image #2: image/png]\n[document #1: spec.pdf (application/pdf)]",
    ),
    prompt,
  );
  assert.ok(!prompt.includes(PNG_4X3), "no bytes in the text");
  assert.deepEqual(turnAttachments(TRANSCRIPT).map((a) => a.label), [
    "image #1",
    "image #2",
    "document #1",
  ]);
});

Deno.test("council attachments: the ask and session key see a placeholder where only an image was sent", async () => {
  const request = await newTurnRequest({
    model: "m",
    system: "",
    transcript: [{ kind: "user", text: "", attachments: [png] }],
    tools: [],
    continuation: false,
  });
  assert.equal(request.ask, "[image: image/png]");
});

Deno.test("council attachments: children and the synthesizer get them; the judge does not", async () => {
  const fake = fakeAgents(byAgent({
    "*:judge": { text: '{"fanOut": true, "reason": "needs a careful look"}' },
    "*:child": { text: "candidate" },
    "*:synth": { text: "final" },
  }));
  const { runTurn } = createCouncil({
    config: testConfig({ fanOutPolicy: "auto" }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const request = testRequest({
    ask: "Compare the screenshot with the spec and explain the difference.",
    transcript: TRANSCRIPT,
  });
  await collect(runTurn(request, new AbortController().signal));
  const expected = turnAttachments(TRANSCRIPT);
  const roles = fake.calls.map((c) => [c.role, c.options.attachments?.length ?? 0]);
  assert.deepEqual(roles, [["judge", 0], ["child", 3], ["child", 3], ["child", 3], ["synth", 3]]);
  for (const call of fake.calls.filter((c) => c.role !== "judge")) {
    assert.deepEqual(call.options.attachments, expected);
  }
});

Deno.test("council attachments: a command child in a real council gets the placeholder and the note", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = `${dir}/fake.log`;
    const { runTurn } = createCouncil({
      config: withAgents([fakeAgent("command", { reply: "I cannot see it.", log })], {
        fanOutPolicy: "never",
      }),
      runAgent: createAgentRunner({ passApiKeys: false, selfOrigins: () => [], pricing: {} }),
    });
    const turn = await collect(runTurn(
      testRequest({ ask: "What is in the picture?", transcript: TRANSCRIPT.slice(0, 1) }),
      new AbortController().signal,
    ));
    assert.deepEqual(turn.outcome, { kind: "answer", text: "I cannot see it.\n" });
    const [entry] = await readFakeLog(log);
    assert.ok(entry.prompt.includes("[image #1: image/png]"), entry.prompt);
    assert.match(entry.prompt, /the user supplied image #1 \(image\/png\), which you cannot view/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
