/**
 * Several real gateway replicas on one PostgreSQL database: exact caps across replicas, a replica
 * killed mid-turn, per-person keys over budget, and start-up refusals.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { fakeAgent } from "../fixtures/fakes.ts";
import { isolatedEnv, mainArgs, run } from "../support/gateway_process.ts";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";
import {
  messagesRequest,
  replyText,
  responsesRequest,
  startReplicas,
} from "../support/replicas.ts";
import { eventually } from "../support/wait.ts";

const ignore = ignoreWithoutPostgres() || Deno.build.os === "windows";
const TURN_USD = 0.1;

/** One instant fake member costing TURN_USD a turn; a prompt with "slow" takes 20 s. */
function council(): Record<string, unknown> {
  return {
    fanOutPolicy: "never",
    defaultAgents: [
      fakeAgent("claude", {
        reply: "ok",
        costUsd: TURN_USD,
        rules: [{ match: "slow", delayMs: 20_000 }],
      }, { name: "member" }),
    ],
  };
}

async function withSql<T>(url: string, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

/** The one session's counters once no reservation is left (settles land asynchronously). */
function settledSession(url: string) {
  return eventually(
    () =>
      withSql(url, async (sql) => {
        const rows = await sql`SELECT turns, usd FROM sessions WHERE reserved_turns = 0`;
        const [left] = await sql`SELECT count(*)::int AS n FROM reservations`;
        return rows.length === 1 && left.n === 0
          ? { turns: rows[0].turns as number, usd: rows[0].usd as number }
          : undefined;
      }),
    "the session settled",
    20_000,
  );
}

Deno.test({
  name: "team: 30 concurrent turns of one session over 3 replicas keep the caps exactly",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using db = await freshDatabase();
    // The spend cap binds first: 10 turns of $0.10 reach $1.00 (maxTurns 12 is never reached).
    await using team = await startReplicas(3, db.url, {
      ...council(),
      maxTurns: 12,
      maxSessionUsd: 1,
      // No replica may look dead here: on a loaded machine a 200 ms beat can slip past the
      // reaper's three, and a released reservation no longer holds its room under the cap.
      databaseHeartbeatMs: 2_000,
    });
    const session = "shared-session-1";
    const replies = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) =>
          messagesRequest(team.gateways[i % 3].origin, session, `question ${i}`)
            .then(async (response) => ({
              status: response.status,
              text: await replyText(response),
            })),
      ),
    );
    assert.ok(replies.every((reply) => reply.status === 200), JSON.stringify(replies));
    const answered = replies.filter((reply) => reply.text === "ok").length;
    const counters = await settledSession(db.url);
    assert.equal(counters.turns, 10, "exactly the turns the spend cap allows");
    assert.equal(answered, 10, "every counted turn answered, no other did");
    // The bound: a turn admitted alone may pass the cap by its estimate's error (here none).
    assert.ok(counters.usd <= 1 + TURN_USD + 1e-9, `spend ${counters.usd}`);
    assert.ok(Math.abs(counters.usd - 1) < 1e-9, `spend ${counters.usd}`);
    const [rows] = await withSql(
      db.url,
      (sql) =>
        sql`SELECT count(*) FILTER (WHERE kind = 'turn' AND (record->>'counted')::boolean)::int
        AS counted FROM ledger_records`,
    );
    assert.equal(rows.counted, 10, "one counted ledger record per counted turn");
  },
});

Deno.test({
  name: "team: a replica killed mid-turn has its reservation released; the others keep serving",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using db = await freshDatabase();
    const beatMs = 500;
    await using team = await startReplicas(2, db.url, {
      ...council(),
      maxTurns: 1,
      databaseHeartbeatMs: beatMs,
    });
    const [doomed, survivor] = team.gateways;
    const session = "killed-session";
    const stuck = messagesRequest(doomed.origin, session, "slow question").catch(() => null);
    await eventually(
      () =>
        withSql(
          db.url,
          async (sql) => (await sql`SELECT id FROM reservations WHERE NOT released`).length === 1,
        ),
      "the slow turn's reservation",
    );
    // maxTurns 1: while the doomed replica holds the turn, the session is at its cap.
    assert.match(
      await replyText(await messagesRequest(survivor.origin, session, "meanwhile")),
      /turn limit/,
    );
    doomed.kill("SIGKILL");
    const killedAt = Date.now();
    await stuck;
    await eventually(
      () =>
        withSql(
          db.url,
          async (sql) => (await sql`SELECT id FROM reservations WHERE NOT released`).length === 0,
        ),
      "the reservation released",
    );
    const releasedMs = Date.now() - killedAt;
    // Reaper period: 3 heartbeats, found by the survivor's next beat (plus scheduling slack).
    assert.ok(releasedMs < 3 * beatMs + beatMs + 2_000, `released after ${releasedMs} ms`);
    const reply = await messagesRequest(survivor.origin, session, "after the crash");
    assert.equal(await replyText(reply), "ok", "the session's turn is free again");
    const starts = await withSql(
      db.url,
      (sql) => sql`SELECT replica FROM ledger_records WHERE kind = 'start' ORDER BY id`,
    );
    assert.equal(starts.length, 2, "the killed turn's start record is kept");
  },
});

/** Runs `main.ts` with args in a scratch dir (HOME isolated) and SVC_DATABASE_URL. */
function cli(args: string[], url: string, dir: string) {
  return run(Deno.execPath(), mainArgs(...args), {
    cwd: dir,
    env: isolatedEnv(dir, { SVC_DATABASE_URL: url, SVC_GATEWAY_PORT: "0" }),
    timeoutMs: 60_000,
  });
}

Deno.test({
  name: "team: a key over its budget gets 429 with retry-after from every replica",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using db = await freshDatabase();
    const scratch = await Deno.makeTempDir({ prefix: "cg-keys-" });
    try {
      const created = await cli(
        ["keys", "create", "--name", "alice", "--max-usd", "0.15", "--period", "day"],
        db.url,
        scratch,
      );
      assert.equal(created.code, 0, created.stderr);
      const key = created.stdout.split("\n")[0];
      assert.match(key, /^cgk_/);
      const token = "admin-token-for-the-team-test";
      await using team = await startReplicas(3, db.url, { ...council(), token });
      const asAlice = { authorization: `Bearer ${key}` };
      // $0.10 a turn against $0.15: the second turn starts under budget, the third does not.
      for (const i of [0, 1]) {
        const reply = await messagesRequest(team.gateways[i].origin, `alice-${i}`, "hi", asAlice);
        assert.equal(await replyText(reply), "ok");
      }
      await eventually(
        () =>
          withSql(db.url, async (sql) => {
            const [row] = await sql`SELECT coalesce(sum(usd), 0) AS usd FROM key_spend`;
            return Math.abs(row.usd - 2 * TURN_USD) < 1e-9;
          }),
        "both turns charged to alice",
      );
      for (const gateway of team.gateways) {
        const refused = await messagesRequest(gateway.origin, "alice-9", "hi", asAlice);
        assert.equal(refused.status, 429);
        const retryAfter = Number(refused.headers.get("retry-after"));
        assert.ok(retryAfter > 0 && retryAfter <= 86_400, `retry-after ${retryAfter}`);
        const body = await refused.json();
        assert.equal(body.type, "error");
        assert.equal(body.error.type, "rate_limit_error");
        assert.match(body.error.message, /alice/);
      }
      const openai = await responsesRequest(team.gateways[2].origin, "alice-r", "hi", {
        "x-api-key": key,
      });
      assert.equal(openai.status, 429);
      assert.equal((await openai.json()).error.code, "budget_exceeded");
      const stranger = await messagesRequest(team.gateways[0].origin, "x", "hi", {
        authorization: "Bearer cgk_not-a-key",
      });
      assert.equal(stranger.status, 401);
      await stranger.body?.cancel();
      const status = await fetch(`${team.gateways[0].origin}/v1/council/team`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const doc = await status.json();
      assert.equal(doc.totals.replicas, 3);
      assert.equal(doc.keys[0].name, "alice");
      assert.ok(Math.abs(doc.keys[0].spentUsd - 0.2) < 1e-9, JSON.stringify(doc.keys));
      const denied = await fetch(`${team.gateways[0].origin}/v1/council/team`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(denied.status, 401, "a person key does not open the status API");
      await denied.body?.cancel();
      const usage = await cli(["usage", "--json"], db.url, scratch);
      assert.equal(usage.code, 0, usage.stderr);
      const summary = JSON.parse(usage.stdout);
      assert.equal(summary.turns, 2, "usage reads the shared ledger");
      assert.ok(Math.abs(summary.usd - 2 * TURN_USD) < 1e-9, usage.stdout);
      const seats = await cli(
        ["usage", "--agents", "--json", "--window", "today"],
        db.url,
        scratch,
      );
      assert.equal(seats.code, 0, seats.stderr);
      const member = JSON.parse(seats.stdout).agents.find((a: { agent: string }) =>
        a.agent === "member"
      );
      assert.equal(member?.seat.turns, 2, seats.stdout);
      const listed = await cli(["keys", "list", "--json"], db.url, scratch);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout).map((k: { name: string }) => k.name), ["alice"]);
      assert.ok(!listed.stdout.includes(key), "the key's text is never shown again");
      const revoked = await cli(["keys", "revoke", "alice"], db.url, scratch);
      assert.equal(revoked.code, 0, revoked.stderr);
      const gone = await messagesRequest(team.gateways[1].origin, "alice-x", "hi", asAlice);
      assert.equal(gone.status, 401, "a revoked key is refused");
      await gone.body?.cancel();
    } finally {
      await Deno.remove(scratch, { recursive: true });
    }
  },
});

Deno.test({
  name: "team: a wrong URL or a newer schema stops start-up with one line and exit 2",
  ignore,
  async fn() {
    await using db = await freshDatabase();
    const scratch = await Deno.makeTempDir({ prefix: "cg-badurl-" });
    try {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const closedPort = (listener.addr as Deno.NetAddr).port;
      listener.close();
      const unreachable = await cli(
        ["serve"],
        `postgres://someone:hunter2-secret@127.0.0.1:${closedPort}/nothing`,
        scratch,
      );
      assert.equal(unreachable.code, 2);
      const line = unreachable.stderr.trim();
      assert.equal(line.split("\n").length, 1, line);
      assert.match(line, /^database: cannot use the database at postgres:\/\/someone:\*\*\*@/);
      assert.ok(!line.includes("hunter2"));
      const wrong = await cli(["serve"], "mysql://127.0.0.1/db", scratch);
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr.trim(), /^database: database URL must start with postgres:\/\//);
      await withSql(db.url, (sql) =>
        sql`CREATE TABLE schema_version (version integer PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_version (version) VALUES (999)`.simple());
      const newer = await cli(["serve"], db.url, scratch);
      assert.equal(newer.code, 2);
      assert.match(newer.stderr.trim(), /schema is version 999, newer than this gateway knows/);
    } finally {
      await Deno.remove(scratch, { recursive: true });
    }
  },
});
