/**
 * Prompt caching survives isolation: a session of fanned-out answer turns in a git project,
 * through the real gateway with the defaults a user gets (isolation on, the warm pool as
 * shipped), with HTTP members on the fake vendor API, which reports cache reads by prefix as
 * the real APIs do. From the second turn on, each child reads most of its input from the cache.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnGateway } from "../support/gateway_process.ts";
import { gitRepo } from "../support/git_repos.ts";
import {
  CALLER_HEADER,
  type RecordedRequest,
  startFakeVendor,
} from "../support/fake_vendor/mod.ts";

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

Deno.test({
  name: "e2e isolation cache: children read ≥ 80 % of their input from the cache from turn 2 on",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "cg-iso-cache-" }));
    await using vendor = startFakeVendor({ answer: { text: "A short answer about notes.txt." } });
    const project = join(dir, "project");
    await Deno.mkdir(project);
    await gitRepo(project, { "notes.txt": "remember the milk\n" });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      fanOutScope: "every-turn",
      defaultAgents: members(vendor.origin),
    }, { [KEY]: "test-key" });
    const turnsOf = new Map<number, RecordedRequest[]>();
    try {
      const messages: { role: string; content: string }[] = [];
      for (const [turn, ask] of ASKS.entries()) {
        messages.push({ role: "user", content: ask });
        const before = vendor.requests.length;
        const response = await fetch(`${gateway.origin}/v1/messages`, {
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
        turnsOf.set(turn, vendor.requests.slice(before));
      }
      const lines = gateway.lines().join("\n");
      assert.match(lines, /each child works in its own git worktree/, "isolation was on");
      for (const name of ["opus", "sonnet", "gpt"]) {
        let read = 0;
        let total = 0;
        for (let turn = 1; turn < ASKS.length; turn++) {
          const calls = turnsOf.get(turn)!.filter((r) => r.caller === name && !isSynthesis(r));
          assert.equal(calls.length, 1, `${name} answered turn ${turn + 1} once`);
          read += calls[0].cache.read;
          total += calls[0].cache.total;
        }
        assert.ok(total > 0, `${name} sent input`);
        assert.ok(
          read / total >= 0.8,
          `${name}: ${(100 * read / total).toFixed(1)} % of its input on turns 2+ from the cache`,
        );
      }
    } finally {
      await gateway.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
