/** Task loading: the fields of task.yaml, and errors that name the file and the field. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadSuite, parseTaskFile, TaskError } from "../../src/eval/task.ts";

Deno.test("task.yaml: fields read, defaults filled", () => {
  const task = parseTaskFile("t/task.yaml", "prompt: fix it\ncheck: make test\n");
  assert.equal(task.prompt, "fix it");
  assert.equal(task.check, "make test");
  assert.equal(task.timeoutSec, 60);
  assert.equal(task.setup, undefined);
});

Deno.test("a malformed task.yaml names the file and the field", () => {
  const cases: [string, RegExp][] = [
    ["check: x\n", /t\/task\.yaml: field "prompt"/],
    ["prompt: p\ncheck: x\ntimeoutSec: soon\n", /t\/task\.yaml: field "timeoutSec"/],
    ["prompt: p\ncheck: x\ntimeoutSec: -1\n", /field "timeoutSec"/],
    ["prompt: p\ncheck: x\nchek: y\n", /t\/task\.yaml: unknown field "chek"/],
    ["prompt: p\n", /field "check"/],
    ["- a list\n", /t\/task\.yaml: expected a mapping/],
    ["prompt: [unclosed\n", /t\/task\.yaml: not valid YAML/],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parseTaskFile("t/task.yaml", text), (err: Error) => {
      assert.ok(err instanceof TaskError);
      assert.match(err.message, message);
      return true;
    });
  }
});

Deno.test("a suite is its task directories in name order; a bad one stops it by name", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (const name of ["b-task", "a-task"]) {
      await Deno.mkdir(join(root, name, "workspace"), { recursive: true });
      await Deno.writeTextFile(join(root, name, "task.yaml"), "prompt: p\ncheck: 'true'\n");
    }
    await Deno.mkdir(join(root, "not-a-task"));
    assert.deepEqual(loadSuite(root).map((t) => t.name), ["a-task", "b-task"]);
    assert.deepEqual(loadSuite(join(root, "b-task")).map((t) => t.name), ["b-task"]);
    await Deno.remove(join(root, "a-task", "workspace"), { recursive: true });
    assert.throws(() => loadSuite(root), /a-task: no workspace\/ directory/);
    await Deno.writeTextFile(join(root, "b-task", "task.yaml"), "prompt: p\n");
    assert.throws(() => loadSuite(join(root, "b-task")), /b-task\/task\.yaml: field "check"/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
