/**
 * Prompt caching survives isolation: a session of fanned-out answer turns in a git project,
 * through the real gateway with the defaults a user gets (isolation on, the warm pool as
 * shipped), with HTTP members (which get no copy) and with claude CLI children (each in its
 * worktree) on the fake vendor API, which reports cache reads by prefix as the real APIs do.
 * From the second turn on, each child reads most of its input from the cache.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnGateway } from "../support/gateway_process.ts";
import { gitRepo, tempDir } from "../support/git_repos.ts";
import {
  CALLER_HEADER,
  type RecordedRequest,
  startFakeVendor,
} from "../support/fake_vendor/mod.ts";

import { findTestCli } from "../support/agent_runner.ts";

const CLAUDE = findTestCli("claude", /Claude Code/);
if (!CLAUDE.path) console.log(`isolation_cache_test: claude CLI skipped: ${CLAUDE.reason}`);
const KEY = "COUNCIL_TEST_VENDOR_KEY";
/** A long system prompt, as a coding host sends (its instructions dominate a turn's input). */
const INSTRUCTIONS = Array.from(
  { length: 400 },
  (_, i) => `Rule ${i}: keep changes small, explain them, and follow the project's style.`,
).join("\n");
const ASKS = [
  "Explain what notes.txt is for.",
  "Suggest a better name for it.",
  "Write a short README paragraph about it.",
  "Which of these changes matters most?",
];

function members(origin: string) {
  const http = (name: string, entry: Record<string, unknown>) => ({
    name,
    apiKeyEnv: KEY,
    headers: { [CALLER_HEADER]: name },
    ...entry,
  });
  return [
    http("opus", { runner: "anthropic", model: "claude-opus-4-5", baseUrl: origin }),
    http("sonnet", { runner: "anthropic", model: "claude-sonnet-4-5", baseUrl: origin }),
    http("gpt", { runner: "openai", model: "gpt-5.5", baseUrl: `${origin}/v1` }),
  ];
}

function isSynthesis(request: RecordedRequest): boolean {
  return request.prompt.includes("Candidate replies");
}

/** Runs the session's turns through the gateway; each turn's upstream requests, in order. */
async function runSession(
  origin: string,
  project: string,
  vendor: { requests: RecordedRequest[] },
): Promise<RecordedRequest[][]> {
  const turns: RecordedRequest[][] = [];
  const messages: { role: string; content: string }[] = [];
  for (const ask of ASKS) {
    messages.push({ role: "user", content: ask });
    const before = vendor.requests.length;
    const response = await fetch(`${origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-claude-code-session-id": "s-1" },
      body: JSON.stringify({
        model: "svc-council",
        max_tokens: 1000,
        system: `${INSTRUCTIONS}\n<env>\nPrimary working directory: ${project}\n</env>`,
        messages,
      }),
    });
    assert.equal(response.status, 200);
    const body = await response.json();
    const text = body.content.map((c: { text?: string }) => c.text ?? "").join("");
    messages.push({ role: "assistant", content: text });
    turns.push(vendor.requests.slice(before));
  }
  return turns;
}

/** The share of `calls`' input tokens read from the cache. */
function cacheShare(calls: RecordedRequest[]): number {
  const total = calls.reduce((sum, r) => sum + r.cache.total, 0);
  assert.ok(total > 0, "input was sent");
  return calls.reduce((sum, r) => sum + r.cache.read, 0) / total;
}

Deno.test({
  name:
    "e2e isolation cache: model API children (given no copy: they touch no files) read ≥ 80 % from the cache from turn 2 on",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using scratch = await tempDir("cg-iso-cache-");
    const dir = scratch.path;
    await using vendor = startFakeVendor({ answer: { text: "A short answer about notes.txt." } });
    const project = join(dir, "project");
    await Deno.mkdir(project);
    await gitRepo(project, { "notes.txt": "remember the milk\n" });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      fanOutScope: "every-turn",
      defaultAgents: members(vendor.origin),
    }, { [KEY]: "test-key" });
    try {
      const turns = await runSession(gateway.origin, project, vendor);
      const lines = gateway.lines().join("\n");
      // Isolation is on; model APIs get no copy, so their prompts name the real project.
      assert.match(lines, /no isolated workspaces: the children are model APIs/);
      assert.doesNotMatch(lines, /each child works in its own git worktree/);
      for (const name of ["opus", "sonnet", "gpt"]) {
        const calls = turns.slice(1).map((turn) => {
          const own = turn.filter((r) => r.caller === name && !isSynthesis(r));
          assert.equal(own.length, 1, `${name} answered each turn once`);
          return own[0];
        });
        const share = cacheShare(calls);
        assert.ok(share >= 0.8, `${name}: ${(100 * share).toFixed(1)} % from the cache`);
      }
    } finally {
      await gateway.stop();
    }
  },
});

Deno.test({
  name: "e2e isolation cache: claude CLI children read ≥ 80 % from the cache from turn 2 on",
  ignore: Deno.build.os === "windows" || !CLAUDE.path,
  async fn() {
    await using scratch = await tempDir("cg-iso-cache-cli-");
    const dir = scratch.path;
    await using vendor = startFakeVendor({ answer: { text: "A short answer about notes.txt." } });
    const project = join(dir, "project");
    const home = join(dir, "child-home");
    await Deno.mkdir(project);
    await Deno.mkdir(home);
    await gitRepo(project, { "notes.txt": "remember the milk\n" });
    const claude = (name: string) => ({
      name,
      runner: "claude",
      model: "claude-opus-4-5",
      command: CLAUDE.path,
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: vendor.origin,
        ANTHROPIC_API_KEY: "test-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      timeoutMs: 120_000,
    });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      fanOutScope: "every-turn",
      defaultAgents: [claude("claude"), claude("claude-b")],
    });
    try {
      const turns = await runSession(gateway.origin, project, vendor);
      assert.match(gateway.lines().join("\n"), /each child works in its own git worktree/);
      for (const child of ["child-1", "child-2"]) {
        // The child's own calls: its working copy is named in the CLI's own system prompt.
        const calls = turns.slice(1).flatMap((turn) =>
          turn.filter((r) =>
            r.prompt.includes(`/${child}`) && !isSynthesis(r) && r.prompt.includes("notes.txt")
          )
        );
        assert.ok(calls.length >= ASKS.length - 1, `${child}: ${calls.length} calls`);
        const share = cacheShare(calls);
        assert.ok(share >= 0.8, `${child}: ${(100 * share).toFixed(1)} % from the cache`);
      }
    } finally {
      await gateway.stop();
    }
  },
});
