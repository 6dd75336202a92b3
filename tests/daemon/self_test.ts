/**
 * How the background gateway and the status line command run this program again: a compiled
 * binary runs itself; from source, deno runs the entry point with the start task's flags (read
 * from the deno.json beside it), or with the permissions it has when there is none.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { selfCommandLine, selfInvocation, startTaskFlags } from "../../src/daemon/self.ts";
import { tempDir } from "../support/temp_scripts.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("self: a compiled binary runs itself, with nothing before the subcommand", () => {
  assert.deepEqual(
    selfInvocation({
      standalone: true,
      execPath: "/usr/local/bin/council-gateway",
      mainModule: "",
    }),
    { command: "/usr/local/bin/council-gateway", args: [] },
  );
});

Deno.test("self: from source, deno runs main.ts with exactly the start task's flags", () => {
  const main = join(ROOT, "main.ts");
  const task = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.start;
  const { command, args } = selfInvocation({
    standalone: false,
    execPath: "/opt/deno",
    mainModule: pathToFileURL(main).href,
  });
  assert.equal(command, "/opt/deno");
  assert.deepEqual(args, [
    "run",
    "--config",
    join(ROOT, "deno.json"),
    ...startTaskFlags(task),
    main,
  ]);
  assert.ok(args.includes("--allow-run"), "the gateway spawns its agents");
});

Deno.test("self: without a deno.json beside the entry point, the permissions this process has", async () => {
  await using dir = await tempDir();
  const main = join(dir.path, "main.ts");
  const { args } = selfInvocation({
    standalone: false,
    execPath: "/opt/deno",
    mainModule: pathToFileURL(main).href,
  });
  assert.equal(args[0], "run");
  assert.equal(args.at(-1), main);
  assert.ok(args.slice(1, -1).every((flag) => /^--allow-[a-z]+$/.test(flag)), args.join(" "));
});

Deno.test("self: the start task's flags; a command line a shell reads back", () => {
  assert.deepEqual(startTaskFlags("deno run --v8-flags=--x -A main.ts serve"), [
    "--v8-flags=--x",
    "-A",
  ]);
  assert.deepEqual(startTaskFlags("node main.js"), []);
  assert.match(
    selfCommandLine("statusline", "--config", "/a b/c.yaml"),
    / statusline --config '\/a b\/c\.yaml'$/,
  );
});
