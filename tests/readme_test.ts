/** The README documents the two setup commands, every config key and every env variable. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AgentSchema, ConfigSchema, ENV_KEYS } from "../src/config/mod.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const README = Deno.readTextFileSync(join(ROOT, "README.md"));

Deno.test("README: the two commands for a machine with only Node/npm, and the deno forms", () => {
  for (
    const command of [
      "npx -y deno@2.9.6 task start",
      "npx -y deno@2.9.6 task test",
      "deno task start",
      "deno task test",
    ]
  ) {
    assert.ok(README.includes(command), command);
  }
  const tasks = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks;
  for (const task of ["start", "dev", "test", "check", "bench"]) assert.ok(tasks[task], task);
  assert.match(tasks.start, /main\.ts serve$/);
});

Deno.test("README: every config key, agent field and SVC_* variable is documented", () => {
  const agentFields = AgentSchema.options.flatMap((runners) => Object.keys(runners.shape));
  for (const key of new Set([...Object.keys(ConfigSchema.shape), ...agentFields])) {
    assert.match(README, new RegExp(`^\\| \`${key}\` +\\|`, "m"), `config key ${key}`);
  }
  for (const name of [...Object.keys(ENV_KEYS), "SVC_CONFIG"]) {
    assert.match(README, new RegExp(`^\\| \`${name}\` +\\|`, "m"), `variable ${name}`);
  }
});

Deno.test("README: placeholders for the install and performance sections exist", () => {
  assert.match(README, /^## Install$/m);
  assert.match(README, /^## Performance$/m);
});
