/**
 * The outage bench's pure parts and its fake-vendor rule: which requests the outage fails and
 * how, which outages a run measures, the two councils of each, and the median ratio it reports.
 */
import assert from "node:assert/strict";
import {
  callerOf,
  OUTAGE_LIMIT,
  outageCouncils,
  outageReport,
  outageRule,
  type OutageState,
  selectedOutages,
} from "../../scripts/bench/latency/outage.ts";
import { httpMembers } from "../../scripts/bench/latency/profiles.ts";
import { CALLER_HEADER, startFakeVendor } from "../support/fake_vendor/mod.ts";

const members = httpMembers("http://127.0.0.1:9");

Deno.test("outage bench: the member down gets its vendor's status and envelope on every model call, nothing else does", async () => {
  const state: OutageState = {};
  await using vendor = startFakeVendor({ rules: [outageRule(state)] });
  const post = (path: string, caller: string) =>
    fetch(`${vendor.origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", [CALLER_HEADER]: caller },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
  const [sonnet] = members;
  const [down] = selectedOutages(members, "sonnet");
  state.down = { caller: callerOf(sonnet, false), outage: down.outage };
  const failed = await post("/v1/messages", "sonnet");
  assert.equal(failed.status, 529);
  assert.equal((await failed.json()).error.type, "overloaded_error");
  const counted = await post("/v1/messages/count_tokens", "sonnet");
  assert.equal(counted.status, 200, "not a model call: answered");
  await counted.body?.cancel();
  const other = await post("/v1/messages", "gpt");
  assert.equal(other.status, 200, "another caller is not down");
  await other.body?.cancel();
  state.down = undefined;
  const healed = await post("/v1/messages", "sonnet");
  assert.equal(healed.status, 200, "no outage in force");
  await healed.body?.cancel();
});

Deno.test("outage bench: the three outages by member or profile name; CLIs are known by their API", () => {
  const all = selectedOutages(members, undefined).map((o) => `${o.member.name} ${o.outage.status}`);
  assert.deepEqual(all, ["gpt 500", "flash 503", "sonnet 529"]);
  const some = selectedOutages(members, "anthropic,flash").map((o) => o.member.name);
  assert.deepEqual(some, ["flash", "sonnet"]);
  assert.equal(callerOf(members[0], true), "messages");
  assert.equal(callerOf(members[1], true), "responses");
});

Deno.test("outage bench: the council with the member down holds every member; the other lacks it", () => {
  const councils = outageCouncils(members, members[0]);
  const names = (c: { defaultAgents: Record<string, unknown>[] }) =>
    c.defaultAgents.map((a) => a.name);
  assert.deepEqual(names(councils.with), ["sonnet", "gpt", "flash"]);
  assert.deepEqual(names(councils.without), ["gpt", "flash"]);
  assert.equal(councils.without.councilSize, 2);
  assert.equal(councils.with.fanOutPolicy, "always");
});

Deno.test("outage bench: the figure is the median of the pairs' ratios, against the 1.3 × target", () => {
  const pair = (withMs: number, withoutMs: number) => ({
    withMs,
    withoutMs,
    withFirstMs: withMs,
    withoutFirstMs: withoutMs,
  });
  const { figures, table } = outageReport("HTTP", [
    { label: "gpt 500", kind: "answer", samples: [pair(12, 10), pair(20, 10), pair(11, 10)] },
    { label: "sonnet 529", kind: "action", samples: [pair(14, 10), pair(12, NaN)] },
    {
      label: "flash 503",
      kind: "answer",
      samples: [pair(11, 10), pair(Infinity, 10), pair(12, 10)],
    },
    { label: "flash 503", kind: "action", samples: [pair(11, 10), pair(Infinity, 10)] },
  ]);
  assert.equal(figures[0].gateway, 1.2);
  assert.equal(figures[0].target?.pass, true);
  assert.equal(figures[1].gateway, 1.4, "a pair whose turn without the member failed is left out");
  assert.equal(figures[1].target?.pass, false);
  assert.equal(figures[2].gateway, 1.2, "a failed outage turn is the worst of the pairs");
  assert.match(figures[2].note ?? "", /1 of 3 turns with it down failed/);
  assert.equal(figures[3].gateway, Infinity, "half of them failed: the median is unbounded");
  assert.equal(figures[3].target?.pass, false);
  assert.equal(figures[1].target?.text, `≤ ${OUTAGE_LIMIT} ×`);
  assert.match(table, /gpt 500 down, answer .*1\.20 ×/);
});
