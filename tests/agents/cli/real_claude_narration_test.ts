/**
 * The REAL `claude` CLI as the lone child of an answer turn, against a model stub that narrates,
 * uses a tool, then answers: the host gets only the answer (narration goes to progress), the
 * long answer streams live (its first delta reaches the host while the child still runs), and
 * the child leaves no session history in its home. Skipped when the CLI is not installed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { deps, post, serve } from "../../support/scripted_turns.ts";
import { SseReader } from "../../support/sse_reader.ts";
import { type RecordedRequest, startFakeVendor } from "../../support/fake_vendor/mod.ts";
import { testConfig } from "../../support/scripted_agents.ts";
import { findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import { within } from "../../support/wait.ts";

const claude = findTestCli("claude", /Claude Code/);
if (!claude.path) console.log(`real_claude_narration_test: skipped: ${claude.reason}`);

const NARRATION = "Let me look at the notes first.";
/** Long enough to stream live: the first chunk alone passes the narration hold. */
const ANSWER = [
  "The notes open with the word PELICAN-4. ".repeat(12),
  "They go on to list the release steps in order. ",
  "That is the whole file.",
];

/** Whether a Messages request's last user message carries a tool result (an answering call). */
function hasToolResult(request: RecordedRequest): boolean {
  const body = request.body as { messages?: { role: string; content: unknown }[] };
  const last = body.messages?.findLast((m) => m.role === "user");
  return Array.isArray(last?.content) &&
    last.content.some((b: { type?: string }) => b?.type === "tool_result");
}

function realClaude(url: string, home: string): AgentConfig {
  return {
    name: "claude",
    runner: "claude",
    model: "opus",
    command: claude.path,
    args: [],
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_AUTH_TOKEN: "test-token",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_MAX_RETRIES: "0",
    },
    timeoutMs: 120_000,
  };
}

/** A Codex-shaped Responses request (answer turns are what Codex asks for) working in `cwd`. */
function codexAsk(cwd: string, ask: string) {
  const text = (t: string) => [{ type: "input_text", text: t }];
  return {
    model: "gpt-5.5",
    stream: true,
    input: [
      { type: "message", role: "developer", content: text("You are a coding agent.") },
      {
        type: "message",
        role: "user",
        content: text(`<environment_context>\n  <cwd>${cwd}</cwd>\n</environment_context>`),
      },
      { type: "message", role: "user", content: text(ask) },
    ],
  };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const full = join(path, entry.name);
      if (entry.isDirectory) await walk(full);
      else out.push(full);
    }
  };
  await walk(dir).catch(() => {});
  return out;
}

Deno.test({
  name: "real claude child: narration before its tool use stays out of the answer, and the " +
    "long answer streams live before the child exits",
  ignore: !claude.path,
  async fn() {
    await using scope = await tempDir("council-narration-");
    const project = join(scope.path, "project");
    const home = join(scope.path, "home");
    await Deno.mkdir(project);
    await Deno.mkdir(home);
    const notes = join(project, "notes.txt");
    await Deno.writeTextFile(notes, "PELICAN-4\nrelease steps\n");
    const release = Promise.withResolvers<void>();
    // Like a model: narrate and ask for a tool; once the tool's result is back, answer, with
    // the answer's last token held until `release`.
    await using stub = startFakeVendor()
      .on({ api: "messages", when: hasToolResult }, {
        text: ANSWER.join(""),
        holdLast: release.promise,
      })
      .on({ api: "messages" }, {
        parts: [{ text: NARRATION }, { tool: { name: "Read", input: { file_path: notes } } }],
      });
    const config = { ...testConfig({ fanOutPolicy: "never" }) };
    config.defaultAgents = [realClaude(stub.origin, home)];
    const council = createCouncil({ config, runAgent: testRunner({ killGraceMs: 1000 }) });
    await using server = serve(deps(council.runTurn));

    const response = await post(
      `${server.url}/v1/responses`,
      codexAsk(project, "What do the notes say?"),
    );
    await using reader = new SseReader(response);
    // Bounded: a gateway that held the answer until the child exits would wait here forever.
    const first = await within(
      reader.until("response.output_text.delta"),
      "an answer delta while the child runs",
      30_000,
    );
    // The child is still streaming: its last chunk waits for `release`.
    assert.equal(
      stub.requests.filter(hasToolResult).length,
      1,
      "the child got its tool result and is answering",
    );
    assert.ok(first.data.delta.startsWith("The notes open"), first.data.delta);
    release.resolve();
    const frames = await reader.rest();

    const answer = frames.filter((f) => f.event === "response.output_text.delta")
      .map((f) => f.data.delta).join("");
    assert.equal(answer, ANSWER.join(""));
    const completed = frames.find((f) => f.event === "response.completed")!;
    const message = completed.data.response.output.find((i: { type: string }) =>
      i.type === "message"
    );
    assert.equal(message.content[0].text, ANSWER.join(""));
    const progress = reader.records.filter((f) =>
      f.event === "response.reasoning_summary_text.delta"
    )
      .map((f) => f.data.delta).join("");
    assert.match(progress, new RegExp(`claude: ${NARRATION}`), progress);
    assert.doesNotMatch(answer, /Let me look/);

    // --no-session-persistence: no transcript of the child's session in its home.
    const transcripts = (await filesUnder(join(home, ".claude"))).filter((f) =>
      f.endsWith(".jsonl")
    );
    assert.deepEqual(transcripts, [], "the child left session files");
  },
});
