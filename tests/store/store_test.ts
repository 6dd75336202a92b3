/** The PostgreSQL store against a real server: migrations, atomic reservations, the reaper. */
import assert from "node:assert/strict";
import { connectStore, type Store, StoreError } from "../../src/store/mod.ts";
import { SCHEMA_VERSION } from "../../src/store/migrations.ts";
import { Availability, RetryQueue } from "../../src/store/availability.ts";
import { StoreJournal } from "../../src/store/store_journal.ts";
import { systemClock } from "../../src/base/clock.ts";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";

const ignore = ignoreWithoutPostgres();

async function withStores(
  count: number,
  work: (stores: Store[], url: string) => Promise<void>,
): Promise<void> {
  await using db = await freshDatabase();
  const stores = await Promise.all(
    Array.from({ length: count }, (_, i) => connectStore(db.url, { replicaId: `r${i}` })),
  );
  try {
    await work(stores, db.url);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
  }
}

Deno.test({
  name: "store: replicas migrating at once apply each migration exactly once",
  ignore,
  async fn() {
    await withStores(4, async ([store]) => {
      const rows = await store.sql`SELECT version FROM schema_version ORDER BY version`;
      assert.deepEqual(
        rows.map((row) => row.version),
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
    });
  },
});

Deno.test({
  name: "store: a database of a newer schema version is refused with a message",
  ignore,
  async fn() {
    await withStores(1, async ([store], url) => {
      await store.sql`INSERT INTO schema_version (version) VALUES (${SCHEMA_VERSION + 1})`;
      await assert.rejects(
        connectStore(url),
        (err: Error) =>
          err instanceof StoreError && /newer than this gateway knows/.test(err.message) &&
          !err.message.includes("\n"),
      );
    });
  },
});

Deno.test({
  name: "store: a wrong or unreachable URL is one clear line",
  ignore,
  async fn() {
    await assert.rejects(connectStore("mysql://x/y"), /must start with postgres:\/\//);
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    await assert.rejects(
      connectStore(`postgres://u:secret@127.0.0.1:${port}/db`, { connectTimeoutS: 2 }),
      (err: Error) =>
        err instanceof StoreError && err.message.startsWith("cannot use the database at") &&
        !err.message.includes("secret") && !err.message.includes("\n"),
    );
  },
});

Deno.test({
  name: "store: concurrent reserves on several replicas admit exactly maxTurns turns",
  ignore,
  async fn() {
    await withStores(3, async (stores) => {
      const caps = { maxTurns: 10, maxSessionUsd: 0 };
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => stores[i % 3].sessions.reserve("s", caps, 0)),
      );
      assert.equal(results.filter((r) => r.kind === "run").length, 10);
      assert.equal(results.filter((r) => r.kind === "capped").length, 20);
      await Promise.all(
        results.map((r, i) =>
          r.kind === "run" ? stores[i % 3].sessions.settle(r.reservation, 0.01) : undefined
        ),
      );
      assert.equal((await stores[0].sessions.get("s"))?.turns, 10);
    });
  },
});

Deno.test({
  name: "store: running turns' estimates must fit under the spend cap; settling twice counts once",
  ignore,
  async fn() {
    await withStores(2, async ([a, b]) => {
      const caps = { maxTurns: 100, maxSessionUsd: 1 };
      const first = await a.sessions.reserve("s", caps, 0);
      assert.equal(first.kind, "run");
      // With no settled turn, the first takes the whole room: the next must wait for it.
      assert.deepEqual(await b.sessions.reserve("s", caps, 0), { kind: "wait", running: 1 });
      if (first.kind !== "run") return;
      assert.deepEqual(await a.sessions.settle(first.reservation, 0.3), {
        key: "s",
        turns: 1,
        usd: 0.3,
      });
      assert.deepEqual(await b.sessions.settle(first.reservation, 0.3), {
        key: "s",
        turns: 1,
        usd: 0.3,
      });
      // 0.3 spent; estimates of 0.3: two fit (0.9), a third (1.2) must wait.
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => [a, b][i % 2].sessions.reserve("s", caps, 0)),
      );
      assert.equal(results.filter((r) => r.kind === "run").length, 2);
      assert.ok(results.every((r) => r.kind === "run" || r.kind === "wait"));
    });
  },
});

Deno.test({
  name: "store: the reaper releases a silent replica's reservations; a late settle books once",
  ignore,
  async fn() {
    await withStores(2, async ([alive, dead]) => {
      await alive.replicas.beat(0);
      await dead.replicas.beat(1);
      const caps = { maxTurns: 1, maxSessionUsd: 0 };
      const held = await dead.sessions.reserve("s", caps, 0);
      assert.equal(held.kind, "run");
      assert.equal((await alive.sessions.reserve("s", caps, 0)).kind, "capped");
      assert.equal(await alive.replicas.reap(60_000), 0, "a fresh heartbeat keeps its turns");
      await dead.sql`UPDATE replicas SET heartbeat_at = now() - interval '1 minute'
        WHERE id = 'r1'`;
      assert.equal(await alive.replicas.reap(30_000), 1);
      assert.deepEqual((await alive.replicas.list()).map((r) => r.id), ["r0"]);
      assert.equal((await alive.sessions.reserve("s", caps, 0)).kind, "run");
      // The "dead" replica was only cut off: its late settle still books its turn, once.
      if (held.kind !== "run") return;
      await dead.sessions.settle(held.reservation, 0.2);
      await dead.sessions.settle(held.reservation, 0.2);
      assert.deepEqual(await alive.sessions.get("s"), { key: "s", turns: 1, usd: 0.2 });
      assert.equal(await alive.sessions.running("s"), 1, "the live replica's turn still holds");
    });
  },
});

Deno.test({
  name: "store: the journal keeps an outcome signal as its own ledger row, kind outcome",
  ignore,
  async fn() {
    await withStores(1, async ([store]) => {
      const availability = new Availability(systemClock);
      const writes = new RetryQueue(systemClock, 50, () => {});
      const journal = new StoreJournal(store.ledger, writes, availability);
      journal.resolved(
        "s1",
        { turn: "t1", toolUseId: "toolu_1", result: "ok" },
        Date.UTC(2026, 0, 2),
      );
      await writes.drain();
      const rows = await store.sql`SELECT kind, turn, session, time, record FROM ledger_records`;
      assert.equal(rows.length, 1);
      assert.deepEqual(
        { kind: rows[0].kind, turn: rows[0].turn, session: rows[0].session },
        { kind: "outcome", turn: "t1", session: "s1" },
      );
      assert.equal(new Date(rows[0].time).toISOString(), "2026-01-02T00:00:00.000Z");
      assert.equal(rows[0].record.result, "ok");
      assert.equal(rows[0].record.toolUseId, "toolu_1");
    });
  },
});

Deno.test("store: a write the database refuses is dropped and reported; one that lost the connection is retried", async () => {
  const heard: [string, boolean][] = [];
  const writes = new RetryQueue(systemClock, 5, (error, dropped) => {
    heard.push([(error as Error).message, dropped]);
  });
  const done: string[] = [];
  writes.push(() => Promise.reject(Object.assign(new Error("duplicate key"), { code: "23505" })));
  let tries = 0;
  writes.push(() => {
    if (++tries < 3) {
      return Promise.reject(Object.assign(new Error("gone"), { code: "CONNECTION_CLOSED" }));
    }
    done.push("retried");
    return Promise.resolve();
  });
  writes.push(() => Promise.resolve(done.push("after")));
  await writes.drain();
  assert.deepEqual(done, ["retried", "after"], "nothing held behind the refused write");
  assert.equal(tries, 3);
  assert.deepEqual(heard, [["duplicate key", true], ["gone", false]]);
});
