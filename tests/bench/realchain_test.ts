/**
 * The real-chain bench: its timeline arithmetic and stub (pure or loopback), and its quick mode,
 * which drives the REAL claude, codex and gemini CLIs through the gateway once per kind of turn
 * and fails when one of them cannot be driven (skipped, with the reason, when they are not
 * installed; .ci/run installs them).
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  behavioursFrom,
  chainProblem,
  realchain,
} from "../../scripts/bench/scenarios/realchain.ts";
import { findClis } from "../../scripts/bench/realchain/clis.ts";
import { parseSse } from "../support/sse_reader.ts";
import { turnTable } from "../../scripts/bench/realchain/report.ts";
import {
  promptKind,
  startChainStub,
  type StubRecord,
  vendorOf,
} from "../../scripts/bench/realchain/upstream.ts";
import {
  coveredMs,
  parseStamps,
  type TurnTimeline,
  turnTimeline,
} from "../../scripts/bench/realchain/timeline.ts";

const STAMPS = [
  "claude 10 start 100.000",
  "codex 11 start 100.010",
  "gemini 12 start 100.020",
  "codex 11 exit 100.400 0",
  "claude 10 exit 100.600 0",
  "gemini 12 exit 101.000 0",
  "claude 13 start 101.005",
  "claude 13 exit 101.500 0",
].join("\n");

function record(vendor: StubRecord["vendor"], arrivedAt: number, repliedAt = arrivedAt + 1) {
  return { vendor, path: "/", kind: "answer", status: 200, arrivedAt, repliedAt } as StubRecord;
}

Deno.test("turnTimeline: children, the synthesizer, their requests and the gateway's share", () => {
  const records = [
    record("claude", 100_300),
    record("codex", 100_200),
    record("gemini", 100_900),
    record("claude", 101_300, 101_310),
    record("claude", 99_000), // another turn's
  ];
  const timeline = turnTimeline(99_998, 101_503, parseStamps(STAMPS), records);
  assert.equal(Math.round(timeline.wallMs), 1505);
  const byLabel = Object.fromEntries(timeline.processes.map((p) => [p.label, p]));
  assert.deepEqual(Object.keys(byLabel).sort(), ["claude", "codex", "gemini", "synth"]);
  assert.equal(Math.round(byLabel.claude.firstRequestMs), 300);
  assert.equal(byLabel.claude.requests, 1, "the synthesizer's request is not the child's");
  assert.equal(Math.round(byLabel.synth.firstRequestMs), 295);
  assert.equal(Math.round(byLabel.synth.modelMs), 10);
  assert.equal(Math.round(byLabel.synth.tailMs), 190);
  assert.equal(Math.round(byLabel.gemini.wallMs), 980);
  // Uncovered: 2 ms before the first start, 5 ms hand-off, 3 ms after the last exit.
  assert.equal(Math.round(timeline.gatewayMs), 10);
  assert.deepEqual(
    [timeline.leadMs, timeline.handoffMs, timeline.closeMs].map(Math.round),
    [2, 5, 3],
  );
});

Deno.test("turnTimeline: a process still running at the end counts to the end; no synth", () => {
  const stamps = parseStamps("codex 1 start 10.000\ngemini 2 start 10.100\ngemini 2 exit 10.5 0");
  const timeline = turnTimeline(9_990, 11_000, stamps, [record("codex", 10_200)]);
  assert.equal(timeline.processes.find((p) => p.label === "synth"), undefined);
  assert.equal(Math.round(timeline.gatewayMs), 10, "codex covers the rest of the turn");
  const gemini = timeline.processes.find((p) => p.vendor === "gemini")!;
  assert.ok(Number.isNaN(gemini.firstRequestMs), "no request (failed early): NaN, not 0");
});

Deno.test("turnTimeline: a warm pool's processes count from the turn's start; idle ones not", () => {
  const stamps = parseStamps([
    "claude 1 start 5.000", // pooled before the turn, used as a child
    "claude 2 start 6.000", // pooled before the turn, used as the synthesizer
    "codex 3 start 7.000", // pooled, still idle: not this turn's
    "claude 1 exit 10.400 0",
    "claude 4 start 10.450", // a refill started during the turn: not this turn's
    "claude 2 exit 10.900 0",
  ].join("\n"));
  const timeline = turnTimeline(10_000, 10_950, stamps, [
    { ...record("claude", 10_100), pid: 1 },
    { ...record("claude", 10_500), pid: 2 },
  ]);
  assert.deepEqual(timeline.processes.map((p) => [p.label, p.pooled]), [
    ["claude", true],
    ["synth", true],
  ]);
  assert.equal(Math.round(timeline.processes[0].firstRequestMs), 100, "from the turn's start");
  assert.equal(
    Math.round(timeline.processes[1].firstRequestMs),
    100,
    "a pooled synthesizer's from the last child's exit",
  );
  assert.ok(Number.isNaN(timeline.gatewayMs), "not told from processes already running");
  assert.equal(Math.round(timeline.closeMs), 50);
});

Deno.test("turnTimeline: the synthesizer is the process that asked to synthesize, when one did", () => {
  const stamps = parseStamps([
    "claude 1 start 10.000", // the child
    "gemini 2 start 10.000",
    "claude 3 start 10.000", // pre-started synthesizer, passed over: exits late
    "claude 1 exit 10.500 1",
    "gemini 2 exit 10.600 0",
    "gemini 4 start 10.610", // the stand-in synthesizer
    "gemini 4 exit 11.000 0",
    "claude 3 exit 11.100 143",
  ].join("\n"));
  const timeline = turnTimeline(9_990, 11_200, stamps, [
    { ...record("claude", 10_100), pid: 1 },
    { ...record("gemini", 10_400), pid: 2 },
    { ...record("gemini", 10_800), pid: 4, kind: "synthesis" },
  ]);
  const synth = timeline.processes.find((p) => p.label === "synth");
  assert.equal(synth?.vendor, "gemini");
  assert.equal(Math.round(synth!.startMs), 620);
});

Deno.test("coveredMs merges overlapping intervals and clips them", () => {
  assert.equal(coveredMs([[0, 10], [5, 20], [30, 40], [35, 36]], 2, 38), 26);
  assert.equal(coveredMs([], 0, 10), 0);
});

Deno.test("chainProblem names the CLI that did not reach the stub or failed", () => {
  const stamps = parseStamps(STAMPS);
  const ok = turnTimeline(99_998, 101_503, stamps, [
    record("claude", 100_300),
    record("codex", 100_200),
    record("gemini", 100_900),
    record("claude", 101_300),
  ]);
  assert.equal(chainProblem(ok, ["claude", "codex", "gemini"]), undefined);
  const silent = turnTimeline(99_998, 101_503, stamps, [record("claude", 100_300)]);
  assert.match(chainProblem(silent, ["claude", "codex"]) ?? "", /codex: .*never reached/);
  assert.match(chainProblem(ok, ["claude", "codex", "gemini", "other" as never]) ?? "", /other/);
});

Deno.test("turnTable prints medians per gateway, side by side", () => {
  const timeline = turnTimeline(99_998, 101_503, parseStamps(STAMPS), [
    record("claude", 100_300),
    record("codex", 100_200),
    record("gemini", 100_900),
    record("claude", 101_300),
  ]);
  const table = turnTable([
    { label: "new", timelines: [timeline] },
    { label: "old", timelines: [{ ...timeline, wallMs: 3010 }] },
  ]);
  assert.match(table, /\| turn wall ÷ old +\| 0\.500 +\| 1 +\|/);
  assert.match(table, /\| synth: wall +\| 495 ms +\| 495 ms +\|/);
});

Deno.test("promptKind and vendorOf tell the council's prompts and the three protocols apart", () => {
  assert.equal(promptKind("x === Candidate replies === y"), "synthesis");
  assert.equal(promptKind("=== Proposed next steps ==="), "selection");
  assert.equal(promptKind("=== Tools the assistant may call ===\n=== Your task ==="), "action");
  assert.equal(promptKind("=== Your task ==="), "answer");
  assert.equal(vendorOf("POST", "/v1/messages"), "claude");
  assert.equal(vendorOf("POST", "/v1/responses"), "codex");
  assert.equal(vendorOf("POST", "/v1beta/models/g-1:streamGenerateContent"), "gemini");
  assert.equal(vendorOf("GET", "/v1/messages"), undefined);
});

Deno.test("behavioursFrom reads the delay and the failures, and rejects nonsense", () => {
  const env = { REALCHAIN_DELAY_MS: "250", REALCHAIN_FAIL: "codex=500,gemini=hang" };
  const behaviours = behavioursFrom((name) => env[name as keyof typeof env]);
  assert.deepEqual(behaviours, {
    claude: { delayMs: 250 },
    codex: { delayMs: 250, fail: 500 },
    gemini: { delayMs: 250, fail: "hang" },
  });
  assert.throws(() => behavioursFrom((n) => (n === "REALCHAIN_FAIL" ? "codex=200" : undefined)));
  assert.throws(() => behavioursFrom((n) => (n === "REALCHAIN_FAIL" ? "cursor=500" : undefined)));
});

Deno.test("the stub answers each protocol, fails on command, and releases a hang on close", async () => {
  const stub = startChainStub({ codex: { delayMs: 0, fail: 529 }, gemini: { delayMs: 0 } });
  try {
    const post = (path: string, body: unknown) =>
      fetch(`${stub.origin}${path}`, { method: "POST", body: JSON.stringify(body) });
    const claude = await post("/v1/messages?beta=true", {
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "=== Tools the assistant may call ===" }],
    });
    const records = parseSse(await claude.text());
    assert.equal(records.at(-1)?.event, "message_stop");
    const proposal = records.map((r) => r.data?.delta?.text ?? "").join("");
    assert.ok(proposal.startsWith('{"kind":"tool"'), "an action prompt gets a proposal");
    const codex = await post("/v1/responses", { model: "gpt" });
    assert.equal(codex.status, 529);
    await codex.body?.cancel();
    const gemini = await post("/v1beta/models/g:streamGenerateContent?alt=sse", {});
    const chunks = parseSse(await gemini.text());
    const draft = chunks.map((r) => r.data.candidates[0].content.parts[0].text).join("");
    assert.equal(draft, "Draft answer from gemini.");
    stub.behave("claude", { delayMs: 0, fail: "hang" });
    const hanging = post("/v1/messages", {}).then((r) => r.body?.cancel(), () => {});
    while (stub.records.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(stub.records.map((r) => [r.vendor, r.status]), [
      ["claude", 200],
      ["codex", 529],
      ["gemini", 200],
      ["claude", 0],
    ]);
    assert.equal(stub.records[0].kind, "action");
    await stub.close();
    await hanging;
  } finally {
    await stub.close().catch(() => {});
  }
});

const clis = await findClis();
const missing = clis.missing.join("; ");
if (missing) console.log(`realchain_test: quick run skipped: CLIs missing: ${missing}`);

Deno.test({
  name: "realchain --quick drives the real claude, codex and gemini through one turn of each kind",
  ignore: missing !== "",
  async fn() {
    const tempDir = await Deno.makeTempDir({ prefix: "realchain-test-" });
    const lines: string[] = [];
    try {
      const result = await realchain.run({
        quick: true,
        repoRoot: join(dirname(fileURLToPath(import.meta.url)), "..", ".."),
        tempDir,
        gatewayFlags: [],
        log: (line) => lines.push(line),
      });
      const walls = result.figures.filter((f) => f.name.includes("turn wall"));
      assert.equal(walls.length, 4, "an answer turn and an action turn, without and with a pool");
      const details = result.details as {
        problems: string[];
        unattributed: string[];
        timelines: Record<string, { label: string; timelines: TurnTimeline[] }[]>;
      };
      assert.deepEqual(details.problems, [], lines.join("\n"));
      assert.deepEqual(details.unattributed, [], "every request names its process");
      // The pool's second turn (the action turn) ran on children started during the first one,
      // which waited longer than claude waits for a silent stdin: the primer kept them.
      const pooled = details.timelines.action.find((c) => c.label.includes("warmPool"))!;
      const used = pooled.timelines[0].processes.filter((p) => p.pooled).map((p) => p.label);
      assert.deepEqual(used.sort(), ["claude", "codex", "gemini", "synth"], lines.join("\n"));
    } finally {
      await Deno.remove(tempDir, { recursive: true });
    }
  },
});
