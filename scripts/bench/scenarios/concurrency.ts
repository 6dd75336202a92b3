import type { Scenario } from "../scenario.ts";
export const concurrency: Scenario = {
  name: "concurrency",
  description: "todo",
  run: () => Promise.resolve({ figures: [] }),
};
