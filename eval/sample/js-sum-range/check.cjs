const assert = require("node:assert/strict");
const { sumRange } = require(process.cwd() + "/sum.js");
assert.equal(sumRange(1, 10), 55);
assert.equal(sumRange(5, 5), 5);
assert.equal(sumRange(-2, 2), 0);
