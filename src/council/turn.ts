/** Runs one council turn (placeholder until the council engine lands). */
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { RunAgent } from "../agents/types.ts";
import type { RunTurn } from "./types.ts";

export interface CouncilDeps {
  config: Readonly<Config>;
  runAgent: RunAgent;
  clock?: Clock;
}

export interface Council {
  runTurn: RunTurn;
}

export function createCouncil(_deps: CouncilDeps): Council {
  return {
    async *runTurn() {
      yield {
        type: "done",
        outcome: { kind: "answer", text: "council not implemented" },
        usage: { inputTokens: 0, outputTokens: 0, usd: 0, calls: 0, wallMs: 0 },
      };
    },
  };
}
