import assert from "node:assert/strict";
import { median } from "../../src/base/median.ts";

Deno.test("median of odd, even and no values, in any order, the input left as it was", () => {
  const values = [5, 1, 3];
  assert.equal(median(values), 3);
  assert.deepEqual(values, [5, 1, 3]);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([]), undefined);
});
