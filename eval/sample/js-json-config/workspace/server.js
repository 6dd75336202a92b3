const config = require("./config.json");
if (typeof config.port !== "number") throw new Error("config.json: port is missing");
console.log(`${config.name} would listen on ${config.port}`);
