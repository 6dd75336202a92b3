/**
 * Asking a gateway over HTTP, with a short time limit: is it up (`/health`), and its status
 * document (`/v1/council/status`). The document is checked at this edge by a schema of the fields
 * the commands read.
 */
import { z } from "zod";

const HealthSchema = z.object({ ok: z.literal(true), version: z.string() });

type Health = { up: true; version: string } | { up: false; reason: string };

function reasonOf(err: unknown): string {
  if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return "no answer in time";
  }
  const message = (err as Error)?.message ?? String(err);
  return /connection refused/i.test(message) ? "connection refused" : message.split("\n")[0];
}

/** Whether a council gateway answers `/health` at `origin`. */
export async function probeHealth(origin: string, timeoutMs = 1000): Promise<Health> {
  try {
    const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.json().catch(() => undefined);
    const health = HealthSchema.safeParse(body);
    if (res.ok && health.success) return { up: true, version: health.data.version };
    return { up: false, reason: `not a council gateway (HTTP ${res.status} on /health)` };
  } catch (err) {
    return { up: false, reason: reasonOf(err) };
  }
}

const CallSchema = z.object({
  label: z.string(),
  agent: z.string(),
  role: z.string(),
  state: z.string(),
  elapsedMs: z.number(),
  costUsd: z.number(),
});
const TurnSchema = z.object({
  turn: z.string(),
  session: z.string(),
  decision: z.object({ kind: z.string(), reason: z.string() }).optional(),
  calls: z.array(CallSchema),
});
const LiveTurnSchema = TurnSchema.extend({ elapsedMs: z.number(), usd: z.number() });
const RecentTurnSchema = TurnSchema.extend({ wallMs: z.number(), usd: z.number() });

/** An agent's health (gateways before it had none: then the field is absent). */
const AgentHealthSchema = z.object({
  state: z.string(),
  failuresInRow: z.number(),
  /** Absent from gateways before misses were counted apart. */
  missesInRow: z.number().optional(),
  lastError: z.string().nullable(),
  coolingUntil: z.string().nullable(),
  coolingLeftMs: z.number().nullable(),
  /** Absent from gateways before probation. */
  probation: z.boolean().optional(),
});
const AgentSchema = z.object({ agent: z.string(), health: AgentHealthSchema.optional() });

/** The status document, as far as the commands read it. */
const StatusViewSchema = z.object({
  version: z.string(),
  uptimeMs: z.number(),
  configPath: z.string().nullable(),
  live: z.array(LiveTurnSchema),
  session: z.object({
    turns: z.number(),
    usd: z.number(),
    live: LiveTurnSchema.nullable(),
    last: RecentTurnSchema.nullable(),
  }).nullable().optional(),
  spend: z.object({ usd: z.number(), turns: z.number() }),
  agents: z.array(AgentSchema).optional(),
});
export type StatusView = z.infer<typeof StatusViewSchema>;
export type AgentView = z.infer<typeof AgentSchema>;
export type AgentHealthView = z.infer<typeof AgentHealthSchema>;
export type LiveTurnView = z.infer<typeof LiveTurnSchema>;

export type StatusReply =
  | { ok: true; status: StatusView }
  | { ok: false; kind: "down" | "unauthorized" | "invalid"; reason: string };

/** The status document (with one session's view when `session` is given). */
export async function fetchStatus(
  origin: string,
  options: { token?: string; session?: string; timeoutMs?: number } = {},
): Promise<StatusReply> {
  const url = new URL("/v1/council/status", origin);
  if (options.session) url.searchParams.set("session", options.session);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? 1000),
    });
  } catch (err) {
    return { ok: false, kind: "down", reason: reasonOf(err) };
  }
  if (res.status === 401) {
    await res.body?.cancel();
    return { ok: false, kind: "unauthorized", reason: "the gateway refused the token" };
  }
  const body = await res.json().catch(() => undefined);
  const parsed = StatusViewSchema.safeParse(body);
  if (!res.ok || !parsed.success) {
    return { ok: false, kind: "invalid", reason: `unexpected answer (HTTP ${res.status})` };
  }
  return { ok: true, status: parsed.data };
}
