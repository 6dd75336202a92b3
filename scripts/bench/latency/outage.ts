/**
 * The outage bench's pieces: the three vendor outages (each member's vendor failing every model
 * request with its usual status, in its error envelope), the fake vendor rule that plays the one
 * in force, the two councils each outage is measured with, and the ratios' table and figures.
 */
import type { Member, ProfileName } from "./profiles.ts";
import type { RecordedRequest, Rule } from "../../../tests/support/fake_vendor/mod.ts";
import { type Figure, formatNumber, formatTable } from "../results.ts";
import { median as medianOf } from "../../../src/base/median.ts";

/** One vendor's outage: the status its API answers every model request with. */
export interface Outage {
  profile: ProfileName;
  status: number;
  message: string;
}

/** The three outages: OpenAI on 500, Gemini on 503, Anthropic overloaded (529). */
export const OUTAGES: readonly Outage[] = [
  { profile: "openai", status: 500, message: "The server had an error processing your request." },
  { profile: "gemini", status: 503, message: "The model is overloaded. Please try again later." },
  { profile: "anthropic", status: 529, message: "Overloaded" },
];

/** How the fake knows a CLI's requests: by the API it speaks (HTTP members name themselves). */
const CLI_CALLERS: Record<ProfileName, string> = {
  anthropic: "messages",
  openai: "responses",
  gemini: "gemini",
};

/** The caller a member's model requests arrive as. */
export function callerOf(member: Member, cli: boolean): string {
  return cli ? CLI_CALLERS[member.profile] : member.name;
}

/** Which caller is down right now (the bench sets it around each turn), and how. */
export interface OutageState {
  down?: { caller: string; outage: Outage };
}

const MODEL_APIS = new Set(["messages", "responses", "chat", "gemini"]);

/** The fake's rule for the outage in force: every model request of that caller fails. */
export function outageRule(state: OutageState): Rule {
  const hit = (r: RecordedRequest) =>
    state.down !== undefined && r.caller === state.down.caller && MODEL_APIS.has(r.api);
  return {
    match: { when: hit },
    answer: () => ({
      fail: { status: state.down!.outage.status, message: state.down!.outage.message },
    }),
  };
}

/** The outages `OUTAGES=openai,claude,…` (profile or member names) asks for; all by default. */
export function selectedOutages(
  members: readonly Member[],
  wanted: string | undefined,
): { member: Member; outage: Outage }[] {
  const names = wanted?.split(",").map((s) => s.trim()).filter(Boolean);
  const out: { member: Member; outage: Outage }[] = [];
  for (const outage of OUTAGES) {
    const member = members.find((m) => m.profile === outage.profile);
    if (!member) continue;
    if (names && !names.includes(member.name) && !names.includes(outage.profile)) continue;
    out.push({ member, outage });
  }
  return out;
}

/** The two councils of one outage: every member (one of them down), and the rest without it. */
export function outageCouncils(members: readonly Member[], down: Member) {
  const council = (list: readonly Member[]) => ({
    fanOutPolicy: "always",
    councilSize: list.length,
    defaultAgents: list.map((m) => m.entry),
  });
  return { with: council(members), without: council(members.filter((m) => m !== down)) };
}

/** One measured pair of first turns: with the member down, and without it. */
export interface PairSample {
  withMs: number;
  withoutMs: number;
  withFirstMs: number;
  withoutFirstMs: number;
}

const seconds = (ms: number) => (Number.isFinite(ms) ? `${formatNumber(ms / 1000)} s` : "–");
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ×` : "–");
/** A pair whose outage turn failed counts as unbounded (Infinity); one missing a side, not at all. */
const median = (xs: number[]) => medianOf(xs.filter((x) => !Number.isNaN(x))) ?? NaN;

/** The target: the outage's first turn within 1.3 × the turn without that member. */
export const OUTAGE_LIMIT = 1.3;

/** One row per outage and turn kind: medians of the walls and of the per-run ratios. */
export function outageReport(
  set: string,
  rows: { label: string; kind: string; samples: PairSample[] }[],
): { table: string; figures: Figure[] } {
  const figures: Figure[] = [];
  const cells = rows.map(({ label, kind, samples }) => {
    const failed = samples.filter((s) => s.withMs === Infinity).length;
    const ratio = median(samples.map((s) => s.withMs / s.withoutMs));
    const firstRatio = median(samples.map((s) => s.withFirstMs / s.withoutFirstMs));
    const withMs = median(samples.map((s) => s.withMs));
    const withoutMs = median(samples.map((s) => s.withoutMs));
    figures.push({
      scenario: "outage",
      name: `Outage (${set}), ${label} down, first ${kind} turn / the turn without it`,
      unit: "×",
      gateway: ratio,
      target: {
        text: `≤ ${OUTAGE_LIMIT} ×`,
        pass: Number.isFinite(ratio) && ratio <= OUTAGE_LIMIT,
      },
      note: `${seconds(withMs)} vs ${seconds(withoutMs)}, median of ${samples.length}` +
        (failed ? `; ${failed} of ${samples.length} turns with it down failed` : ""),
    });
    return [
      `${label} down, ${kind}`,
      seconds(withMs),
      seconds(withoutMs),
      times(ratio),
      times(firstRatio),
    ];
  });
  const header = ["", "with it down", "without it", "wall ratio", "first answer ratio"];
  const table = `Outage, ${set} members, first turn on a fresh gateway (medians; target wall ` +
    `ratio ≤ ${OUTAGE_LIMIT} ×):\n${formatTable(header, cells)}`;
  return { table, figures };
}
