import assert from "node:assert/strict";
import { nodeCompileCacheDir } from "../../../src/agents/cli/compile_cache.ts";

Deno.test("compile cache: under the user's cache directory (XDG_CACHE_HOME, else ~/.cache)", () => {
  assert.equal(
    nodeCompileCacheDir({ HOME: "/home/u" }),
    "/home/u/.cache/council-gateway/node-compile-cache",
  );
  assert.equal(
    nodeCompileCacheDir({ HOME: "/home/u", XDG_CACHE_HOME: "/xdg" }),
    "/xdg/council-gateway/node-compile-cache",
  );
});

Deno.test("compile cache: the user's own setting or switch-off wins; no home, no cache", () => {
  assert.equal(nodeCompileCacheDir({ HOME: "/home/u", NODE_COMPILE_CACHE: "/mine" }), undefined);
  assert.equal(
    nodeCompileCacheDir({ HOME: "/home/u", NODE_DISABLE_COMPILE_CACHE: "1" }),
    undefined,
  );
  assert.equal(nodeCompileCacheDir({}), undefined);
});
