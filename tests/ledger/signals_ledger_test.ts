/**
 * Outcome signals over HTTP into the ledger file: a council's chosen call goes out under its
 * tool_use id, the host's next request brings its result, and the ledger keeps both, so the
 * seats read back after the gateway stopped count them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readSeatRecords } from "../../src/ledger/records_file.ts";
import { seats } from "../../src/ledger/seats.ts";
import { byAgent, fakeAgents } from "../support/scripted_agents.ts";
import { postAction, readProposal } from "../support/action_requests.ts";
import { configWith, gateway } from "../support/real_server.ts";

Deno.test("signals reach the ledger file and seats read them back after a restart", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ledger = join(dir, "ledger.jsonl");
    const fake = fakeAgents(byAgent({
      "claude:child": { text: readProposal("/a") },
      "codex:child": { text: readProposal("/b") },
      "claude:synth": { text: '{"choose": 2}' },
    }));
    const config = configWith({ ledger, fanOutPolicy: "always" });
    const ask = { role: "user", content: "Look at the two files and tell me which is bigger" };
    {
      await using server = gateway(config, { runAgent: fake.runAgent });
      const first = await postAction(`http://127.0.0.1:${server.port}`, [ask]);
      const call = first.content.find((b: { type: string }) => b.type === "tool_use");
      assert.match(call.id, /^toolu_cgw_/);
      await postAction(`http://127.0.0.1:${server.port}`, [ask, {
        role: "assistant",
        content: [call],
      }, {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: call.id,
          content: "no such file",
          is_error: true,
        }],
      }]);
    }
    const records = readSeatRecords(ledger);
    const outcomes = records.flatMap((r) => r.kind === "outcome" ? [r.outcome] : []);
    assert.equal(outcomes.length, 1);
    assert.equal(outcomes[0].result, "error");
    const rows = seats(records, "all", Date.now(), ["claude", "codex"]);
    const codex = rows.find((r) => r.agent === "codex")!;
    assert.deepEqual([codex.chosen, codex.chosenError, codex.chosenOk], [1, 1, 0]);
    const claude = rows.find((r) => r.agent === "claude")!;
    assert.deepEqual([claude.chosen, claude.valid, claude.agreed], [0, 1, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
