/**
 * Running `statusline`: stdin read (briefly), the gateway found and asked, one line printed.
 * Kept apart from the other commands so the status line loads little: Claude Code runs it every
 * second while a turn runs.
 */
import type { Config } from "../../config/mod.ts";
import { fetchStatus } from "../../daemon/gateway_client.ts";
import { runningDaemon } from "../../daemon/lifecycle.ts";
import { daemonPaths } from "../../daemon/paths.ts";
import { endpointKey } from "../../base/origins.ts";
import { clientOrigin } from "../connect.ts";
import type { CliIo } from "../io.ts";
import { renderStatusLine, sessionIdOf } from "./line.ts";
import { contextPart, hostContextOf } from "./context_window.ts";
import { councilContextTokens } from "../../server/council_window.ts";

/** Standard input, unless there is none or it never closes. */
async function readStdin(io: CliIo, timeoutMs = 1000): Promise<string> {
  if (!io.stdin) return "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(""), timeoutMs)));
  try {
    return await Promise.race([io.stdin(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The token Claude Code itself presents to this gateway (the status line runs in its
 * environment), when the gateway's own configuration here does not name one.
 */
function hostToken(env: (name: string) => string | undefined, origin: string): string | undefined {
  const base = env("ANTHROPIC_BASE_URL");
  const key = base ? endpointKey(base) : undefined;
  return key !== undefined && key === endpointKey(origin)
    ? env("ANTHROPIC_AUTH_TOKEN") || env("ANTHROPIC_API_KEY") || undefined
    : undefined;
}

/** One line, always, and exit 0: a failing command would blank Claude Code's line. */
export async function statusline(io: CliIo, load: () => Readonly<Config>): Promise<number> {
  const stdin = await readStdin(io);
  const session = sessionIdOf(stdin);
  let config: Readonly<Config>;
  try {
    config = load();
  } catch (err) {
    io.stdout(`council · config error: ${(err as Error).message.slice(0, 80)}\n`);
    return 0;
  }
  let origin = clientOrigin(config);
  try {
    origin = runningDaemon(daemonPaths(io.env))?.origin ?? origin;
  } catch { /* no state directory: the configured address */ }
  const where = origin.replace(/^http:\/\//, "");
  const token = config.token ?? hostToken(io.env, origin);
  const reply = await fetchStatus(origin, { token, session, timeoutMs: 800 });
  const context = contextPart(hostContextOf(stdin), councilContextTokens(config.defaultAgents));
  const line = renderStatusLine(reply, where);
  io.stdout(`${context ? `${line} · ${context}` : line}\n`);
  return 0;
}
