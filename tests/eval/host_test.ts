/** The eval's host: how each host CLI is run against a run's gateway, and what it may see. */
import assert from "node:assert/strict";
import { hostEnv, hostPlan } from "../../src/eval/host.ts";

Deno.test("claude runs headless (-p) at the gateway, edits and commands allowed in the copy", () => {
  const plan = hostPlan("claude", "http://127.0.0.1:4100", "fix it");
  assert.deepEqual(plan.args.slice(0, 2), ["-p", "fix it"]);
  assert.ok(plan.args.includes("acceptEdits"));
  assert.equal(plan.env.ANTHROPIC_BASE_URL, "http://127.0.0.1:4100");
  assert.ok(plan.env.ANTHROPIC_AUTH_TOKEN, "a placeholder credential: no login");
  assert.equal(plan.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1");
});

Deno.test("codex runs `exec` with the gateway as its provider, writing only in the workspace", () => {
  const plan = hostPlan("codex", "http://127.0.0.1:4100", "fix it");
  const exec = plan.args.indexOf("exec");
  assert.ok(exec > 0, "the provider overrides come first");
  assert.ok(plan.args.some((a) => a.includes('base_url="http://127.0.0.1:4100/v1"')));
  assert.deepEqual(plan.args.slice(exec), [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--sandbox",
    "workspace-write",
    "fix it",
  ]);
});

Deno.test("the host sees none of the user's own endpoints, keys or provider switches", () => {
  const env = hostEnv({
    PATH: "/bin",
    HOME: "/home/u",
    ANTHROPIC_API_KEY: "sk-ant",
    ANTHROPIC_BASE_URL: "https://api.anthropic.com",
    OPENAI_API_KEY: "sk-oa",
    CLAUDE_CODE_USE_BEDROCK: "1",
    CLAUDE_CODE_OAUTH_TOKEN: "t",
    CODEX_HOME: "/home/u/.codex",
    GIT_AUTHOR_NAME: "u",
  });
  assert.deepEqual(env, {
    PATH: "/bin",
    HOME: "/home/u",
    CODEX_HOME: "/home/u/.codex",
    GIT_AUTHOR_NAME: "u",
  });
});
