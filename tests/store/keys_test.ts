/** Per-person keys: periods (pure), and create / find / charge / revoke on a real server. */
import assert from "node:assert/strict";
import { connectStore } from "../../src/store/mod.ts";
import { hashKey, periodEnd, periodStart } from "../../src/store/key_rows.ts";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";

const WED = Date.UTC(2026, 10, 25, 15, 30); // Wednesday 25 Nov 2026, 15:30 UTC

Deno.test("keys: budget periods are UTC days, weeks from Monday, calendar months", () => {
  assert.equal(periodStart("day", WED), Date.UTC(2026, 10, 25));
  assert.equal(periodEnd("day", WED), Date.UTC(2026, 10, 26));
  assert.equal(periodStart("week", WED), Date.UTC(2026, 10, 23));
  assert.equal(periodEnd("week", WED), Date.UTC(2026, 10, 30));
  assert.equal(periodStart("week", Date.UTC(2026, 10, 29, 23)), Date.UTC(2026, 10, 23));
  assert.equal(periodStart("month", WED), Date.UTC(2026, 10, 1));
  assert.equal(periodEnd("month", Date.UTC(2026, 11, 31)), Date.UTC(2027, 0, 1));
  assert.equal(periodStart("none", WED), 0);
  assert.equal(periodEnd("none", WED), null);
});

Deno.test({
  name: "keys: only the hash is stored; spend is per period; a revoked key is not found",
  ignore: ignoreWithoutPostgres(),
  async fn() {
    await using db = await freshDatabase();
    const store = await connectStore(db.url);
    try {
      const { id, key } = await store.keys.create({ name: "alice", maxUsd: 5, period: "day" });
      const [row] = await store.sql`SELECT key_hash FROM api_keys WHERE id = ${id}`;
      assert.equal(row.key_hash, await hashKey(key));
      const text = JSON.stringify(await store.sql`SELECT * FROM api_keys`);
      assert.ok(!text.includes(key), "the key's text is not stored");
      assert.equal(await store.keys.find(`${key}x`, WED), undefined);
      const found = await store.keys.find(key, WED);
      assert.equal(found?.name, "alice");
      await store.keys.charge(found!, 2, WED);
      await store.keys.charge(found!, 1.5, WED + 3_600_000);
      assert.equal((await store.keys.find(key, WED))?.spentUsd, 3.5);
      assert.equal((await store.keys.find(key, WED + 86_400_000))?.spentUsd, 0, "a new day");
      assert.equal(await store.keys.revoke("alice"), 1);
      assert.equal(await store.keys.find(key, WED), undefined);
      assert.ok((await store.keys.list(WED))[0].revokedAt !== null);
    } finally {
      await store.close();
    }
  },
});
