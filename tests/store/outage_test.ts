/**
 * PostgreSQL stopped under load: turns get a 503 in their protocol's envelope, nothing is counted
 * twice, and the replicas serve again by themselves once the database is back.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { fakeAgent } from "../fixtures/fakes.ts";
import {
  createDatabase,
  ignoreWithoutPostgres,
  ownCluster,
  startServer,
  stopServer,
} from "../support/postgres.ts";
import {
  messagesRequest,
  replyText,
  responsesRequest,
  startReplicas,
} from "../support/replicas.ts";
import { eventually } from "../support/wait.ts";

interface Outcome {
  status: number;
  answered: boolean;
}

/** Workers sending turns of one session round-robin over the replicas until stopped. */
function load(origins: string[], session: string, workers: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; running; i++) {
      const origin = origins[(worker + i) % origins.length];
      try {
        const response = await messagesRequest(origin, session, `turn ${worker}.${i}`);
        const answered = response.status === 200 && await replyText(response) === "ok";
        if (response.status !== 200) await response.body?.cancel();
        outcomes.push({ status: response.status, answered });
      } catch {
        outcomes.push({ status: 0, answered: false });
      }
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

Deno.test({
  name: "team: the database stopped under load gives 503s, counts nothing twice, and resumes",
  ignore: ignoreWithoutPostgres() || Deno.build.os === "windows",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cluster = await ownCluster();
    const url = await createDatabase(cluster, "outage");
    await using team = await startReplicas(2, url, {
      fanOutPolicy: "never",
      defaultAgents: [fakeAgent("claude", { reply: "ok", costUsd: 0.01 }, { name: "member" })],
    });
    const origins = team.gateways.map((gateway) => gateway.origin);
    const traffic = load(origins, "outage-session", 4);
    await eventually(() => traffic.outcomes.filter((o) => o.answered).length >= 8, "turns served");
    await stopServer(cluster);
    const stoppedAt = traffic.outcomes.length;
    await eventually(
      () => traffic.outcomes.slice(stoppedAt).filter((o) => o.status === 503).length >= 6,
      "503s while the database is down",
    );
    for (const origin of origins) {
      const messages = await messagesRequest(origin, "outage-session", "down?");
      assert.equal(messages.status, 503);
      assert.ok(Number(messages.headers.get("retry-after")) > 0);
      const body = await messages.json();
      assert.equal(body.type, "error");
      assert.equal(
        body.error.type,
        "overloaded_error",
        "503: retry later, as every 503 of the gateway",
      );
      assert.match(body.error.message, /database/);
      const responses = await responsesRequest(origin, "outage-session", "down?");
      assert.equal(responses.status, 503);
      assert.equal((await responses.json()).error.code, "database_unavailable");
    }
    await startServer(cluster);
    const restartedAt = traffic.outcomes.length;
    await eventually(
      () => traffic.outcomes.slice(restartedAt).filter((o) => o.answered).length >= 8,
      "turns served again",
      20_000,
    );
    await traffic.stop();
    const answered = traffic.outcomes.filter((o) => o.answered).length;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const counted = await eventually(
        async () => {
          const [row] = await sql`SELECT turns, reserved_turns FROM sessions`;
          return row.reserved_turns === 0 && row.turns === answered ? row.turns : undefined;
        },
        `the session's turns settled at ${answered}`,
        20_000,
      );
      assert.equal(counted, answered, "every answered turn counted once, and only those");
      const [turns] = await sql`SELECT count(*)::int AS n FROM ledger_records
        WHERE kind = 'turn' AND (record->>'counted')::boolean`;
      assert.equal(turns.n, answered, "one counted ledger record per answered turn");
      const [starts] = await sql`SELECT count(*)::int AS n FROM ledger_records
        WHERE kind = 'start'`;
      assert.equal(starts.n, answered, "every admitted turn's start record kept");
    } finally {
      await sql.end();
    }
  },
});
