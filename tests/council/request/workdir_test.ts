import assert from "node:assert/strict";
import { join } from "node:path";
import {
  isSystemDirectory,
  recoverWorkingDirectory,
  workingDirectoryCandidates,
} from "../../../src/council/request/workdir.ts";
import type { TranscriptEntry } from "../../../src/council/types.ts";

const user = (text: string): TranscriptEntry => ({ kind: "user", text });
const system = (text: string): TranscriptEntry => ({ kind: "system", text });
const asIs = (path: string) => path;

/** Claude Code's main-agent environment block (our own wording of its shape). */
const envBlock = (dir: string) =>
  `# Environment\nYou have been invoked in the following environment: \n` +
  ` - Primary working directory: ${dir}\n - Is a git repository: false\n - Platform: linux\n`;

Deno.test("cwd: Claude Code main-agent block in the system prompt (2.1.197 shape)", () => {
  const found = recoverWorkingDirectory(envBlock("/home/dev/proj"), [user("hi")], {}, asIs);
  assert.deepEqual(found, { path: "/home/dev/proj" });
});

Deno.test("cwd: Claude Code 2.1.330 block in a mid-conversation system message", () => {
  const transcript = [
    user("<system-reminder>context</system-reminder>"),
    user("say hi"),
    system(envBlock("/home/dev/proj330")),
  ];
  const found = recoverWorkingDirectory("You are an agent.", transcript, {}, asIs);
  assert.deepEqual(found, { path: "/home/dev/proj330" });
});

Deno.test("cwd: the host's own line beats other cwd: text wherever it stands", () => {
  // An MCP server's instructions come first in the system prompt; the host's line still wins.
  const prompt = "MCP server says:\ncwd: /elsewhere\n";
  const transcript = [user("hi"), system(envBlock("/home/dev/proj"))];
  assert.deepEqual(workingDirectoryCandidates(prompt, transcript), [
    "/home/dev/proj",
    "/home/dev/proj",
    "/elsewhere",
  ]);
  assert.equal(recoverWorkingDirectory(prompt, transcript, {}, asIs).path, "/home/dev/proj");
  // The subagent <env> format beats cwd: too, and the main format beats the subagent one.
  const sub = "cwd: /a\n<env>\nWorking directory: /srv/app\nIs directory a git repo: No\n</env>";
  assert.equal(recoverWorkingDirectory(sub, [], {}, asIs).path, "/srv/app");
  assert.equal(
    recoverWorkingDirectory(sub + "\n" + envBlock("/main"), [], {}, asIs).path,
    "/main",
  );
});

Deno.test("cwd: Codex <environment_context> in a user message; users' cwd: lines ignored", () => {
  const ctx = "<environment_context>\n  <cwd>/home/dev/codex</cwd>\n</environment_context>";
  assert.equal(
    recoverWorkingDirectory("You are Codex.", [user(ctx)], {}, asIs).path,
    "/home/dev/codex",
  );
  assert.deepEqual(recoverWorkingDirectory("", [user("cwd: /home/dev/typed")], {}, asIs), {});
  const toolResult: TranscriptEntry = {
    kind: "tool_result",
    id: "t",
    text: "cwd: /x",
    isError: false,
  };
  assert.deepEqual(recoverWorkingDirectory("", [toolResult], {}, asIs), {});
  assert.deepEqual(workingDirectoryCandidates("call getcwd: /nope\ncwd: relative", []), []);
  const inSystemMessage = [
    system("<environment_context><cwd>/home/dev/c2</cwd></environment_context>"),
  ];
  assert.equal(recoverWorkingDirectory("", inSystemMessage, {}, asIs).path, "/home/dev/c2");
});

Deno.test("cwd: a candidate that does not resolve to a directory is skipped", () => {
  const prompt = "Primary working directory: /gone\nWorking directory: /exists";
  const resolve = (p: string) => (p === "/exists" ? p : undefined);
  assert.equal(recoverWorkingDirectory(prompt, [], {}, resolve).path, "/exists");
  assert.deepEqual(recoverWorkingDirectory(prompt, [], {}, () => undefined), {});
});

Deno.test("cwd: resolved through .. and symlinks on the real filesystem", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "workdir-test-" }));
  try {
    const project = join(base, "project");
    await Deno.mkdir(join(project, "sub"), { recursive: true });
    await Deno.symlink(project, join(base, "link"));
    const viaDots = recoverWorkingDirectory(`cwd: ${project}/sub/..`, []);
    assert.equal(viaDots.path, project);
    assert.equal(recoverWorkingDirectory(`cwd: ${base}/link`, []).path, project);
    await Deno.writeTextFile(join(base, "file.txt"), "x");
    assert.deepEqual(recoverWorkingDirectory(`cwd: ${base}/file.txt`, []), {});
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("cwd: the filesystem root and system directories fall back with a note", () => {
  for (const dir of ["/", "/etc", "/usr/lib", "/proc/self", "/var", "/var/lib/x", "/root"]) {
    assert.ok(isSystemDirectory(dir), dir);
    const found = recoverWorkingDirectory(`cwd: ${dir}`, [], {}, asIs);
    assert.equal(found.path, undefined, dir);
    assert.match(found.note ?? "", /system directory; children use a temp dir/);
  }
  for (const dir of ["/home/dev/proj", "/tmp/x", "/var/tmp/x", "/var/folders/ab/T/x", "/srv/a"]) {
    assert.equal(isSystemDirectory(dir), false, dir);
  }
});

Deno.test("cwd: workspaceRoots restricts children to directories under them", () => {
  const roots = { workspaceRoots: ["/home/dev/work"] };
  const inside = recoverWorkingDirectory("cwd: /home/dev/work/app", [], roots, asIs);
  assert.equal(inside.path, "/home/dev/work/app");
  const outside = recoverWorkingDirectory("cwd: /home/dev/workshop", [], roots, asIs);
  assert.equal(outside.path, undefined);
  assert.match(outside.note ?? "", /outside workspaceRoots/);
});

Deno.test("cwd: a refused directory's note reaches progress, and children run in a temp dir", async () => {
  const { createCouncil } = await import("../../../src/council/turn/turn.ts");
  const { newTurnRequest } = await import("../../../src/council/request/turn_request.ts");
  const { FakeClock } = await import("../../support/fake_clock.ts");
  const { collect, fakeAgents, testConfig } = await import("../../support/scripted_agents.ts");
  const fake = fakeAgents(() => ({ text: "done" }));
  const { runTurn } = createCouncil({
    config: testConfig({ fanOutPolicy: "never" }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const request = await newTurnRequest({
    model: "claude-opus-4-8",
    system: envBlock("/etc"),
    transcript: [user("list the files")],
    tools: [],
    continuation: false,
  });
  const log = await collect(runTurn(request, new AbortController().signal));
  assert.ok(
    log.progress.some((line) => /working directory \/etc is a system directory/.test(line)),
    log.progress.join("\n"),
  );
  assert.ok(fake.calls.length > 0 && fake.calls.every((call) => call.options.cwd === undefined));
});
