/** The test cluster itself: each test gets its own empty database on one throwaway server. */
import assert from "node:assert/strict";
import postgres from "postgres";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";

Deno.test({
  name: "test cluster: each test gets its own fresh database",
  ignore: ignoreWithoutPostgres(),
  async fn() {
    await using first = await freshDatabase();
    await using second = await freshDatabase();
    assert.notEqual(first.name, second.name);
    const sql = postgres(first.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`SELECT current_database() AS name, count(*)::int AS tables
        FROM information_schema.tables WHERE table_schema = 'public'`;
      assert.deepEqual({ ...row }, { name: first.name, tables: 0 });
    } finally {
      await sql.end();
    }
  },
});
