const assert = require("node:assert/strict");
const { camelCase } = require(process.cwd() + "/util.js");
assert.equal(camelCase("foo-bar baz"), "fooBarBaz");
assert.equal(camelCase("Hello_world"), "helloWorld");
assert.equal(camelCase("single"), "single");
assert.equal(camelCase("  many   spaces "), "manySpaces");
