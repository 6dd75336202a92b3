import assert from "node:assert/strict";
import { moduleMap, summaryOf, unpadded, withMap } from "../scripts/module_map.ts";

const repo = new URL("..", import.meta.url).pathname;

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
});
