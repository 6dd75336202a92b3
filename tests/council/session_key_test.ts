/**
 * Session identity on requests of the shapes the real hosts send: the host's session id when
 * present (stable across `--continue`, new after `/clear`), else a hash over the system prompt
 * with its volatile lines normalised and the first user message.
 */
import assert from "node:assert/strict";
import { newTurnRequest } from "../../src/council/request/turn_request.ts";
import { normaliseVolatile, sessionKeyFor } from "../../src/council/session_key.ts";
import { messagesHints } from "../../src/protocol/messages/hints.ts";
import { MessagesRequestSchema, messagesTurnInput } from "../../src/protocol/messages/request.ts";
import { responsesHints } from "../../src/protocol/responses/hints.ts";
import {
  ResponsesRequestSchema,
  responsesTurnInput,
} from "../../src/protocol/responses/request.ts";
import { CLAUDE_SYSTEM, claudeAsk, codexInput } from "../support/host_bodies.ts";
import {
  claudeHeaders,
  codexHeaders,
  codexSolBody,
  type HostRequest,
} from "../support/housekeeping_bodies.ts";

async function claudeKey({ headers, body }: HostRequest): Promise<string> {
  const hints = messagesHints(new Headers(headers), body);
  const input = messagesTurnInput(MessagesRequestSchema.parse(body), undefined, hints);
  return (await newTurnRequest(input)).sessionKey;
}

async function codexKey({ headers, body }: HostRequest): Promise<string> {
  const hints = responsesHints(new Headers(headers), body);
  const input = responsesTurnInput(ResponsesRequestSchema.parse(body), undefined, hints);
  return (await newTurnRequest(input)).sessionKey;
}

/** Claude Code 2.1.197's system prompt as on a first run, and as rewritten on `--continue`. */
function systemWithModelLine(line: string, git = "Current branch: main\n\nStatus:\n?? new.txt") {
  return [
    ...CLAUDE_SYSTEM,
    {
      type: "text",
      text: `# Environment\n - Platform: linux\n - OS Version: Linux 6.1.0\n${line}\n\n` +
        `gitStatus: a snapshot taken when the conversation started.\n\n${git}\n\n` +
        "Recent commits:\n0123abc first commit\n",
    },
  ];
}
const FIRST_RUN = " - You are powered by the model named Opus 4.8 (1M context). The exact " +
  "model ID is claude-opus-4-8[1m].";
const CONTINUED = " - You are powered by the model named Opus 4.8. The exact model ID is " +
  "claude-opus-4-8.";

/** A body with no session id anywhere (no header, no metadata). */
function anonymous(system: unknown[], ask = "Add a retry to the uploader") {
  const body: Record<string, unknown> = { ...claudeAsk(ask), system };
  delete body.metadata;
  return { headers: {}, body };
}

Deno.test("session: Claude Code's session header keeps one session across --continue", async () => {
  const first = await claudeKey({
    headers: claudeHeaders(),
    body: claudeAsk("Add a retry to the uploader", { system: systemWithModelLine(FIRST_RUN) }),
  });
  const continued = await claudeKey({
    headers: claudeHeaders(),
    body: claudeAsk("Add a retry to the uploader", { system: systemWithModelLine(CONTINUED) }),
  });
  assert.equal(continued, first);
});

Deno.test("session: after /clear (a new session id) the same first message is a new session", async () => {
  const body = claudeAsk("Add a retry to the uploader");
  const before = await claudeKey({ headers: claudeHeaders(undefined, "session-a"), body });
  const after = await claudeKey({ headers: claudeHeaders(undefined, "session-b"), body });
  assert.notEqual(after, before);
});

Deno.test("session: without the header, Claude Code's metadata.user_id session id is used", async () => {
  const withId = (id: string) => ({
    headers: {},
    body: claudeAsk("Add a retry to the uploader", {
      metadata: { user_id: JSON.stringify({ device_id: "d", session_id: id }) },
    }),
  });
  assert.equal(await claudeKey(withId("one")), await claudeKey(withId("one")));
  assert.notEqual(await claudeKey(withId("one")), await claudeKey(withId("two")));
  // Header and metadata name the same session: one key either way.
  assert.equal(
    await claudeKey(withId("one")),
    await claudeKey({ headers: claudeHeaders(undefined, "one"), body: withId("x").body }),
  );
});

Deno.test("session: with no id at all, the hash ignores the lines Claude Code 2.1.197 rewrites on --continue", async () => {
  const first = await claudeKey(anonymous(systemWithModelLine(FIRST_RUN)));
  const continued = await claudeKey(
    anonymous(systemWithModelLine(CONTINUED, "Current branch: fix\n\nStatus:\nM a.ts")),
  );
  assert.equal(continued, first);
  const other = await claudeKey(anonymous(systemWithModelLine(FIRST_RUN), "Another conversation"));
  assert.notEqual(other, first);
  const otherSystem = await claudeKey(
    anonymous([...systemWithModelLine(FIRST_RUN), { type: "text", text: "Be brief." }]),
  );
  assert.notEqual(otherSystem, first);
});

Deno.test("session: volatile lines are removed, the rest kept", () => {
  const text = "Intro\n - You are powered by the model named X.\nToday's date is 2031-02-03.\n" +
    "Kept line\n - OS Version: Linux 9\ngitStatus: snapshot\nCurrent branch: main\n\n" +
    "Recent commits:\nabc1234 one\ndef5678 two\nAfter the commits\n" +
    "gitStatus: again\nStatus:\nM x\n\n# Next heading\nKept too";
  const out = normaliseVolatile(text);
  assert.doesNotMatch(out, /powered by|2031|OS Version|Current branch|gitStatus/);
  assert.match(out, /Intro/);
  assert.match(out, /Kept line/);
  assert.match(out, /After the commits/);
  assert.doesNotMatch(out, /abc1234|def5678|again|M x/);
  assert.match(out, /# Next heading\nKept too/);
});

Deno.test("session: Codex's session-id header, else the session_id of its turn metadata", async () => {
  const body = codexSolBody(codexInput("Add a retry to the uploader"));
  const a = await codexKey({ headers: codexHeaders("user", "thread-a"), body });
  const a2 = await codexKey({
    headers: { "x-codex-turn-metadata": JSON.stringify({ session_id: "thread-a" }) },
    body,
  });
  const b = await codexKey({ headers: codexHeaders("user", "thread-b"), body });
  assert.equal(a2, a);
  assert.notEqual(b, a);
  const source = await sessionKeyFor({ system: "", transcript: [], hints: { sessionId: "x" } });
  assert.equal(source.source, "host");
});
