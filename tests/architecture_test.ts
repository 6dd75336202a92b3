/**
 * The architecture as tests: the rules every src/ module keeps (layer direction, no cycles,
 * small files and folders, one name per meaning, a mod.ts per folder), each checker shown to
 * catch a violation, and docs/ARCHITECTURE.md's module map kept in step with the code.
 */
import assert from "node:assert/strict";
import { moduleMap, summaryOf, unpadded, withMap } from "../scripts/module_map.ts";
import {
  crowdedFolders,
  filesBesideFolders,
  foldersWithoutMod,
  importCycles,
  type ImportGraph,
  importGraph,
  layerViolations,
  MAX_FILE_LINES,
  nameClashes,
  oversizeFiles,
  relativeImports,
  srcModules,
} from "./support/import_rules.ts";

const repo = new URL("..", import.meta.url).pathname;
const modules = await srcModules(repo);
const paths = [...modules.keys()];

Deno.test("src/: imports follow the layers (protocol → council → agents; base imports no feature)", () => {
  assert.deepEqual(layerViolations(importGraph(modules)), []);
});

Deno.test("src/: no import cycles", () => {
  assert.deepEqual(importCycles(importGraph(modules)), []);
});

Deno.test(`src/: no file over ${MAX_FILE_LINES} lines, no folder over 20 files`, () => {
  const lines = new Map([...modules].map(([path, source]) => [path, source.split("\n").length]));
  assert.deepEqual(oversizeFiles(lines), []);
  assert.deepEqual(crowdedFolders(paths), []);
});

Deno.test("src/: one file name per meaning, no x.ts beside x/, a mod.ts in every folder", () => {
  assert.deepEqual(nameClashes(paths), []);
  assert.deepEqual(filesBesideFolders(paths), []);
  assert.deepEqual(foldersWithoutMod(paths), []);
  for (const path of paths.filter((path) => path.endsWith("/mod.ts"))) {
    const doc = modules.get(path)!.match(/^\s*\/\*\*([\s\S]*?)\*\//)?.[1] ?? "";
    const text = doc.split("\n").map((line) => line.replace(/^\s*\*\s?/, "").trim()).join(" ")
      .replace(/\s+/g, " ").trim();
    assert.ok(text !== "", `${path} opens with a doc comment`);
    assert.equal(summaryOf(modules.get(path)!), text, `${path}: its doc comment is one sentence`);
  }
});

Deno.test("import rules: the parser finds static, type, re-export and dynamic imports", () => {
  const source = [
    'import { a } from "./a.ts";',
    'import type { B } from "../b/b.ts";',
    'export * from "./c.ts";',
    "import {\n  d,\n} from './d.ts';",
    'const e = await import("./e.ts");',
    'import "./f.ts";',
    'import { z } from "zod";',
    'import { join } from "node:path";',
  ].join("\n");
  assert.deepEqual(relativeImports(source), [
    "./a.ts",
    "../b/b.ts",
    "./c.ts",
    "./d.ts",
    "./e.ts",
    "./f.ts",
  ]);
  const graph = importGraph(
    new Map([["src/council/turn/turn.ts", 'import { x } from "../../agents/run.ts";']]),
  );
  assert.deepEqual(graph.get("src/council/turn/turn.ts"), ["src/agents/run.ts"]);
});

Deno.test("import rules: each wrong-way import is reported, the right way is not", () => {
  const graph: ImportGraph = new Map([
    ["src/protocol/p.ts", ["src/council/types.ts", "src/server/app.ts"]],
    ["src/council/types.ts", ["src/agents/types.ts", "src/protocol/p.ts"]],
    ["src/agents/types.ts", ["src/council/types.ts", "src/base/clock.ts"]],
    ["src/base/clock.ts", ["src/agents/types.ts"]],
    ["src/config/load.ts", ["src/base/clock.ts", "src/server/app.ts"]],
    ["src/server/app.ts", ["src/protocol/p.ts", "src/council/types.ts", "src/agents/types.ts"]],
  ]);
  assert.deepEqual(layerViolations(graph), [
    "src/agents/types.ts → src/council/types.ts (agents must not import council)",
    "src/base/clock.ts → src/agents/types.ts (base must not import agents)",
    "src/config/load.ts → src/server/app.ts (config must not import server)",
    "src/council/types.ts → src/protocol/p.ts (council must not import protocol)",
    "src/protocol/p.ts → src/server/app.ts (protocol must not import server)",
  ]);
});

Deno.test("import rules: a cycle is reported with its members, an acyclic graph has none", () => {
  const graph: ImportGraph = new Map([
    ["src/a.ts", ["src/b.ts"]],
    ["src/b.ts", ["src/c.ts"]],
    ["src/c.ts", ["src/a.ts", "src/d.ts"]],
    ["src/d.ts", []],
    ["src/e.ts", ["src/e.ts"]],
  ]);
  assert.deepEqual(importCycles(graph), [["src/a.ts", "src/b.ts", "src/c.ts"], ["src/e.ts"]]);
  graph.set("src/c.ts", ["src/d.ts"]);
  graph.set("src/e.ts", []);
  assert.deepEqual(importCycles(graph), []);
});

Deno.test("import rules: size, crowding, name clashes, x.ts beside x/ and missing mod.ts", () => {
  assert.deepEqual(
    oversizeFiles(new Map([["src/a.ts", MAX_FILE_LINES + 1], ["src/b.ts", MAX_FILE_LINES]])),
    [`src/a.ts (${MAX_FILE_LINES + 1} lines)`],
  );
  const crowded = Array.from({ length: 21 }, (_, i) => `src/x/f${i}.ts`);
  assert.deepEqual(crowdedFolders(crowded), ["src/x (21 files)"]);
  assert.deepEqual(crowdedFolders(crowded.slice(1)), []);
  assert.deepEqual(
    nameClashes(["src/a/sse.ts", "src/b/sse.ts", "src/a/types.ts", "src/b/types.ts"]),
    ["sse.ts: src/a/sse.ts, src/b/sse.ts"],
  );
  assert.deepEqual(filesBesideFolders(["src/config.ts", "src/config/mod.ts"]), ["src/config.ts"]);
  assert.deepEqual(foldersWithoutMod(["src/a/mod.ts", "src/a/x.ts", "src/b/y.ts"]), ["src/b"]);
});

Deno.test("docs/ARCHITECTURE.md maps every module of src/ with its own summary", async () => {
  const document = await Deno.readTextFile(`${repo}docs/ARCHITECTURE.md`);
  const map = await moduleMap(repo);
  assert.equal(
    unpadded(withMap(document, map)),
    unpadded(document),
    "module map is stale: run `deno run -A scripts/module_map.ts`",
  );
  assert.ok(!map.includes("(no summary)"), "every module opens with a doc comment");
});

Deno.test("module map: a summary is the doc comment's first sentence, on one line", () => {
  assert.equal(
    summaryOf("/**\n * Reads `a.ts` files.\n * More here.\n */\ncode"),
    "Reads `a.ts` files.",
  );
  assert.equal(summaryOf("/** One | two. */"), "One \\| two.");
  assert.equal(summaryOf("// not a doc comment\n"), "");
  assert.throws(() => withMap("no markers", "map"), /no module map markers/);
  assert.equal(unpadded("| a   | b |\n| --- | ------ |"), "| a | b |\n| - | - |");
  assert.equal(unpadded("one two\nthree\n\n| a |"), unpadded("one\ntwo three\n\n| a |"));
  assert.notEqual(unpadded("one two\n\nthree"), unpadded("one two three"));
});
