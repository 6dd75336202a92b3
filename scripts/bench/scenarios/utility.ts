import type { Scenario } from "../scenario.ts";
export const utility: Scenario = {
  name: "utility",
  description: "todo",
  run: () => Promise.resolve({ figures: [] }),
};
