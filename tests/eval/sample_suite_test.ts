/** The sample suite in eval/sample: every task loads, and no check passes on the unfixed copy. */
import assert from "node:assert/strict";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSuite } from "../../src/eval/task.ts";

const SAMPLE = fileURLToPath(new URL("../../eval/sample", import.meta.url));

Deno.test("the sample suite has 8 to 12 tasks in several languages", () => {
  const tasks = loadSuite(SAMPLE);
  assert.ok(tasks.length >= 8 && tasks.length <= 12, `${tasks.length}`);
  const languages = new Set(tasks.map((t) => t.name.split("-")[0]));
  assert.deepEqual([...languages].sort(), ["js", "py", "sh"]);
  for (const task of tasks) {
    assert.ok(task.check.includes("$TASK_DIR"), `${task.name}: its check is hidden`);
  }
});

Deno.test("every sample check fails on the workspace as given", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-sample-" });
  try {
    for (const task of loadSuite(SAMPLE)) {
      const work = join(root, task.name);
      await cp(task.workspace, work, { recursive: true });
      const { code } = await new Deno.Command("sh", {
        args: ["-c", task.check],
        cwd: work,
        env: { TASK_DIR: task.dir },
        stdout: "null",
        stderr: "null",
      }).output();
      assert.notEqual(code, 0, `${task.name}: the check passes before any fix`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
