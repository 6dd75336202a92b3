import type { Scenario } from "../scenario.ts";
export const passthrough: Scenario = {
  name: "passthrough",
  description: "todo",
  run: () => Promise.resolve({ figures: [] }),
};
