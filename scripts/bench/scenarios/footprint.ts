import type { Scenario } from "../scenario.ts";
export const footprint: Scenario = {
  name: "footprint",
  description: "todo",
  run: () => Promise.resolve({ figures: [] }),
};
