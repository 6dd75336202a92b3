/**
 * Each agent's health as the status document shows it: the council's reading, with the cool-down's
 * end as a time and what is left of it.
 */
import { oneLine } from "../base/text.ts";
import type { AgentFigures, AgentHealthReading, AgentHealthView } from "./types.ts";

/** A last error longer than this is cut (a CLI's stderr tail can run long). */
export const MAX_LAST_ERROR = 300;

const HEALTHY: AgentHealthView = {
  state: "healthy",
  failuresInRow: 0,
  missesInRow: 0,
  lastError: null,
  coolingUntil: null,
  coolingLeftMs: null,
  probation: false,
};

/** The view of one reading at `now` (no reading: healthy). */
function healthView(reading: AgentHealthReading | undefined, now: number): AgentHealthView {
  if (!reading) return HEALTHY;
  const until = reading.coolingUntil;
  // The council's clock is the store's; a cool-down that has just run out reads as over.
  const cooling = reading.state === "cooling-down" && until !== undefined && until > now;
  return {
    state: cooling ? "cooling-down" : reading.state === "healthy" ? "healthy" : "failing",
    failuresInRow: reading.failuresInRow,
    missesInRow: reading.missesInRow ?? 0,
    lastError: reading.lastError === undefined ? null : oneLine(reading.lastError, MAX_LAST_ERROR),
    coolingUntil: cooling ? new Date(until).toISOString() : null,
    coolingLeftMs: cooling ? until - now : null,
    probation: !cooling && reading.probation === true,
  };
}

/** Figures with each agent's health (healthy when the council has no reading of it). */
export function withHealth(
  figures: readonly Omit<AgentFigures, "health">[],
  readings: readonly AgentHealthReading[],
  now: number,
): AgentFigures[] {
  const byAgent = new Map(readings.map((reading) => [reading.agent, reading]));
  return figures.map((figure) => ({
    ...figure,
    health: healthView(byAgent.get(figure.agent), now),
  }));
}

/** Whether some agent is cooling down at `now` (its time left then moves with the clock). */
export function anyCooling(readings: readonly AgentHealthReading[], now: number): boolean {
  return readings.some((reading) => healthView(reading, now).state === "cooling-down");
}
