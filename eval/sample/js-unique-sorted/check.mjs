import assert from "node:assert/strict";
const { uniqueSorted } = await import(process.cwd() + "/list.mjs");
assert.deepEqual(uniqueSorted([10, 9, 1, 9]), [1, 9, 10]);
assert.deepEqual(uniqueSorted([3, -1, 20, 3]), [-1, 3, 20]);
assert.deepEqual(uniqueSorted([]), []);
