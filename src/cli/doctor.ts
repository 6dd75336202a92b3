/**
 * `doctor`: checks the configuration, each agent's CLI (found? `--version`?) and the bind
 * address, and prints them as a table.
 */
import { bindPolicyProblem } from "../auth.ts";
import { type AgentEntry, type Config, findOnPath } from "../config.ts";
import { urlHost } from "../server.ts";

/** How long a `--version` may take before it counts as broken. */
export const VERSION_TIMEOUT_MS = 5000;

/** The executable a runner uses when the agent names no `command`. */
export const RUNNER_COMMANDS: Record<AgentEntry["runner"], string | null> = {
  claude: "claude",
  codex: "codex",
  gemini: "gemini",
  command: null,
};

export interface VersionProbe {
  ok: boolean;
  /** First non-empty output line, or the reason it failed. */
  text: string;
}

/** Runs `<path> --version` with stdin closed and a time limit; never throws. */
export async function probeVersion(
  path: string,
  timeoutMs = VERSION_TIMEOUT_MS,
): Promise<VersionProbe> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const output = await new Deno.Command(path, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: controller.signal,
    }).output();
    if (controller.signal.aborted) return { ok: false, text: `no answer within ${timeoutMs} ms` };
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    const first = (text: string) =>
      text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "") ?? "";
    const line = first(decode(output.stdout)) || first(decode(output.stderr));
    if (!output.success) {
      return { ok: false, text: `exit ${output.code}${line ? `: ${line}` : ""}` };
    }
    return { ok: true, text: line || "(no output)" };
  } catch (err) {
    if (controller.signal.aborted) return { ok: false, text: `no answer within ${timeoutMs} ms` };
    return { ok: false, text: (err as Error).message.split("\n")[0] };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `host:port` can be bound right now (port 0 always can). */
export function bindStatus(host: string, port: number): { ok: boolean; text: string } {
  if (port === 0) return { ok: true, text: "ephemeral port" };
  try {
    const listener = Deno.listen({ hostname: host, port });
    listener.close();
    return { ok: true, text: "free" };
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) return { ok: false, text: "address already in use" };
    return { ok: false, text: (err as Error).message.split("\n")[0] };
  }
}

export interface AgentRow {
  name: string;
  runner: string;
  model: string;
  executable: string | null;
  version: string;
  status: string;
  ok: boolean;
}

async function checkAgent(
  name: string,
  agent: Partial<AgentEntry>,
  env: (name: string) => string | undefined,
): Promise<AgentRow> {
  const runner = agent.runner ?? "claude";
  const command = agent.command ?? RUNNER_COMMANDS[runner] ?? "";
  const base = { name, runner, model: agent.model ?? "(default)" };
  const executable = command ? findOnPath(command, env) : null;
  if (!executable) {
    const where = command.includes("/") ? command : `${command || "(no command)"} on PATH`;
    return { ...base, executable, version: "-", status: `not found: ${where}`, ok: false };
  }
  // A `command` runner's program is the model itself; running it could start work.
  if (runner === "command") return { ...base, executable, version: "-", status: "ok", ok: true };
  const probe = await probeVersion(executable);
  return {
    ...base,
    executable,
    version: probe.ok ? probe.text : "-",
    status: probe.ok ? "ok" : `--version failed: ${probe.text}`,
    ok: probe.ok,
  };
}

/** Lays out rows as aligned columns. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()).join(
    "\n",
  ) + "\n";
}

export interface DoctorReport {
  text: string;
  problems: string[];
}

/** Runs every check (agents in parallel) and renders the report. */
export async function runDoctor(
  config: Readonly<Config>,
  env: (name: string) => string | undefined,
): Promise<DoctorReport> {
  const problems: string[] = [];
  const entries: [string, Partial<AgentEntry>][] = config.defaultAgents.map((a) => [a.name, a]);
  if (config.judge && (config.judge.runner || config.judge.command)) {
    entries.push(["judge", config.judge]);
  }
  const agents = await Promise.all(entries.map(([name, a]) => checkAgent(name, a, env)));
  const bind = bindStatus(config.host, config.port);
  const policy = bindPolicyProblem(config);
  const address = `${urlHost(config.host)}:${config.port}`;

  const checks: string[][] = [["CHECK", "VALUE", "STATUS"]];
  checks.push(["config file", config.configPath ?? "(none: defaults and SVC_* env)", "ok"]);
  checks.push(["bind address", `${address} (${bind.text})`, bind.ok ? "ok" : "PROBLEM"]);
  if (!bind.ok) problems.push(`bind address ${address}: ${bind.text}`);
  checks.push([
    "auth",
    config.token ? "on (token set)" : "off",
    policy ? "PROBLEM" : "ok",
  ]);
  if (policy) problems.push(policy);
  const count = config.defaultAgents.length;
  checks.push([
    "agents",
    config.agentsSource === "path"
      ? `${count} found on PATH (defaultAgents not configured)`
      : `${count} configured`,
    count ? "ok" : "PROBLEM",
  ]);
  if (config.defaultAgents.length === 0) {
    problems.push(
      "no agents: configure defaultAgents or install the claude, codex or gemini CLI",
    );
  }

  const agentRows: string[][] = [["AGENT", "RUNNER", "MODEL", "EXECUTABLE", "VERSION", "STATUS"]];
  for (const row of agents) {
    agentRows.push([
      row.name,
      row.runner,
      row.model,
      row.executable ?? "-",
      row.version,
      row.status,
    ]);
    if (!row.ok) problems.push(`${row.name}: ${row.status}`);
  }

  let text = table(checks);
  if (agents.length) text += "\n" + table(agentRows);
  text += "\n" +
    (problems.length === 0
      ? "doctor: all checks passed\n"
      : `doctor: ${problems.length} problem${problems.length === 1 ? "" : "s"}:\n` +
        problems.map((p) => `  - ${p}\n`).join(""));
  return { text, problems };
}
