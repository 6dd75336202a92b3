/** The eval's arms: council, solo:AGENT, best-of:AGENT:N and NAME=FILE, and wrong specs. */
import assert from "node:assert/strict";
import { ArmError, parseArm, resolveArms } from "../../src/eval/arms.ts";
import { configOf } from "../support/test_config.ts";

const config = configOf({
  councilSize: 3,
  fanOutPolicy: "always",
  defaultAgents: [
    { runner: "claude", model: "opus" },
    { runner: "codex", model: "gpt-5.5", args: ["--x"] },
    { runner: "anthropic", model: "claude-haiku", name: "api" },
  ],
});
const base = { fanOutPolicy: "always", councilSize: 3, logLevel: "warn" };
const noFile = () => ({});

Deno.test("arms: council as configured; solo one member; best-of N copies that pick their own", () => {
  const council = parseArm("council", base, config, noFile);
  assert.equal((council.config.defaultAgents as unknown[]).length, 3);
  assert.equal(council.config.councilSize, undefined);
  const solo = parseArm("solo:codex", base, config, noFile);
  assert.deepEqual(solo.config.defaultAgents, [
    { name: "codex", runner: "codex", model: "gpt-5.5", args: ["--x"], timeoutMs: 600_000 },
  ]);
  assert.equal(solo.config.councilSize, undefined);
  assert.equal(solo.config.fanOutPolicy, "always");
  const bestOf = parseArm("best-of:api:4", base, config, noFile);
  const copies = bestOf.config.defaultAgents as Record<string, unknown>[];
  assert.equal(copies.length, 4);
  assert.equal(bestOf.config.councilSize, 4);
  for (const copy of copies) {
    assert.equal(copy.runner, "anthropic");
    assert.equal("args" in copy || "env" in copy, false, "an HTTP agent takes no args or env");
  }
});

Deno.test("arms: NAME=FILE reads the file; default arms are the council and each agent alone", () => {
  const read: string[] = [];
  const file = parseArm("mine=./other.yaml", base, config, (path) => {
    read.push(path);
    return { defaultAgents: [] };
  });
  assert.deepEqual([file.name, file.kind, read], ["mine", "file", ["./other.yaml"]]);
  assert.deepEqual(resolveArms([], base, config, noFile).map((a) => a.name), [
    "council",
    "solo:claude",
    "solo:codex",
    "solo:api",
  ]);
});

Deno.test("arms: an unknown agent, a bad N, a wrong spec or a repeated arm are refused by name", () => {
  const cases: [string[], RegExp][] = [
    [["solo:gemini"], /--arm solo:gemini: no agent named "gemini" \(agents: claude, codex, api\)/],
    [["best-of:claude:0"], /N must be 1 to 16/],
    [["solo"], /expected council, solo:<agent>, best-of:<agent>:<N> or NAME=FILE/],
    [["council", "council"], /--arm council is given twice/],
  ];
  for (const [specs, message] of cases) {
    assert.throws(() => resolveArms(specs, base, config, noFile), (err: Error) => {
      assert.ok(err instanceof ArmError);
      assert.match(err.message, message);
      return true;
    });
  }
});
