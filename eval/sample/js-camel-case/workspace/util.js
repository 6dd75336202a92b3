function camelCase(text) {
  throw new Error("not implemented");
}

module.exports = { camelCase };
