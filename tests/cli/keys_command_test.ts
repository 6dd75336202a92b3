/** `keys`: what it refuses before it touches a database (each one line, exit 2). */
import assert from "node:assert/strict";
import { type CliIo, runCli } from "../../src/cli/mod.ts";
import { envOf } from "../support/temp_scripts.ts";

async function keys(argv: string[], env: Record<string, string> = {}) {
  let stderr = "";
  const io: CliIo = {
    env: envOf({ PATH: "", ...env }),
    cwd: "/nonexistent-dir-for-tests",
    stdout: () => {},
    stderr: (text) => (stderr += text),
  };
  return { code: await runCli(["keys", ...argv], io), stderr };
}

Deno.test("keys: a wrong command line or no database is one line and exit 2", async () => {
  const db = { SVC_DATABASE_URL: "postgres://127.0.0.1:1/none" };
  const cases: [string[], Record<string, string>, RegExp][] = [
    [[], db, /keys: create, list or revoke\?/],
    [["rotate"], db, /unknown action "rotate"/],
    [["create", "--max-usd", "5"], db, /--name is required/],
    [["create", "--name", "alice"], db, /--max-usd is required/],
    [["create", "--name", "alice", "--max-usd", "lots"], db, /"lots" is not an amount/],
    [["create", "--name", "a", "--max-usd", "5", "--period", "year"], db, /"year" is not one of/],
    [["revoke"], db, /which key\?/],
    [["list"], {}, /no database configured/],
  ];
  for (const [argv, env, message] of cases) {
    const result = await keys(argv, env);
    assert.equal(result.code, 2, argv.join(" "));
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  }
});
