const assert = require("node:assert/strict");
const config = require(process.cwd() + "/config.json");
assert.deepEqual(config, { name: "demo", debug: false, port: 8080 });
