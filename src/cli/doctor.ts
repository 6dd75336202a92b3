/**
 * `doctor`: checks the configuration, each agent's CLI (found? `--version`?) or HTTP endpoint
 * (reachable? model listed?) and the bind address, and prints them as a table, with the agents'
 * health on a gateway already running there.
 */
import { bindPolicyProblem } from "../config/bind_policy.ts";
import {
  type AgentEntry,
  type Config,
  DEFAULT_TIMEOUT_MS,
  type HttpRunner,
  isHttpRunner,
} from "../config/mod.ts";
import { findOnPath } from "../base/executables.ts";
import { urlHost } from "../base/origins.ts";
import { probeHealth } from "../daemon/gateway_client.ts";
import { clientOrigin } from "./connect.ts";
import { gatewayHealth } from "./doctor_health.ts";
import { seatsSummary } from "./doctor_seats.ts";
import { HTTP_ADAPTERS } from "../agents/adapters.ts";
import { CLI_ADAPTERS, discoverableNames } from "../agents/cli/runners.ts";
import { apiKeyEnvOf, baseUrlOf } from "../agents/http/http_api.ts";
import { probeModels } from "../agents/http/http_probe.ts";
import { judgeAgent } from "../council/plan/plan.ts";
import { describeGroupSpawn, machineGroupSpawn } from "../agents/process/group_spawn.ts";

/**
 * How long a `--version` may take before it counts as broken. Node-based CLIs (gemini) load
 * their whole bundle for it, which on a busy machine takes several seconds.
 */
const VERSION_TIMEOUT_MS = 15_000;
/** How long an HTTP agent's models list may take before the endpoint counts as unreachable. */
const ENDPOINT_TIMEOUT_MS = 3000;

interface VersionProbe {
  ok: boolean;
  /** First non-empty output line, or the reason it failed. */
  text: string;
}

/**
 * Runs `<path> <args>` (its version probe) with stdin closed, `env` over the inherited
 * environment and a time limit; never throws.
 */
export async function probeVersion(
  path: string,
  timeoutMs = VERSION_TIMEOUT_MS,
  env: Record<string, string> = {},
  args: readonly string[] = ["--version"],
): Promise<VersionProbe> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const output = await new Deno.Command(path, {
      args: [...args],
      env,
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

/**
 * Whether `host:port` can be bound right now (port 0 always can), or is held by a running council
 * gateway (then it is fine: that is the gateway this configuration runs).
 */
async function bindOrGatewayStatus(
  host: string,
  port: number,
): Promise<{ ok: boolean; text: string; gateway?: string }> {
  const bind = bindStatus(host, port);
  if (bind.ok || bind.text !== "address already in use") return bind;
  const origin = clientOrigin({ host, port });
  const health = await probeHealth(origin);
  return health.up
    ? { ok: true, text: `in use by a running council-gateway ${health.version}`, gateway: origin }
    : bind;
}

/** Whether `host:port` can be bound right now (port 0 always can). */
function bindStatus(host: string, port: number): { ok: boolean; text: string } {
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

function runningAsRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}

interface AgentRow {
  name: string;
  runner: string;
  model: string;
  executable: string | null;
  version: string;
  status: string;
  ok: boolean;
}

/**
 * Whether a listed id is the configured model: the same id, or the model as an alias of a dated
 * or `latest` id (`claude-haiku-4-5` for `claude-haiku-4-5-20251001`, `llama3.1` for
 * `llama3.1:latest`).
 */
export function listsModel(ids: readonly string[], model: string): boolean {
  return ids.some((id) =>
    id === model || id === `${model}:latest` ||
    (id.startsWith(`${model}-`) && /^(\d{8}|latest)$/.test(id.slice(model.length + 1)))
  );
}

/** An HTTP agent: the endpoint answers, the key is there, and the model is listed if it can be. */
async function checkHttpAgent(
  name: string,
  runner: HttpRunner,
  agent: Partial<AgentEntry>,
  env: (name: string) => string | undefined,
  timeoutMs: number,
): Promise<AgentRow> {
  const adapter = HTTP_ADAPTERS[runner];
  const config = {
    name,
    runner,
    model: "",
    args: [],
    env: {},
    timeoutMs: DEFAULT_TIMEOUT_MS,
    ...agent,
  };
  const baseUrl = baseUrlOf(config, adapter);
  const base = { name, runner, model: agent.model ?? "(default)", executable: baseUrl || null };
  const row = (version: string, status: string, ok: boolean) => ({ ...base, version, status, ok });
  if (!baseUrl) return row("-", "no baseUrl configured", false);
  const keyName = apiKeyEnvOf(config, adapter);
  const apiKey = env(keyName) || undefined;
  const probe = await probeModels(adapter, config, apiKey, timeoutMs);
  if (!probe.reachable) return row("-", `unreachable: ${probe.error}`, false);
  const missingKey = !apiKey && adapter.keyRequired ? `${keyName} is not set` : "";
  if (probe.status === 401 || probe.status === 403) {
    return row("-", `HTTP ${probe.status}: ${missingKey || probe.error}`, false);
  }
  if (missingKey) return row("-", `reachable, but ${missingKey}`, false);
  if (probe.models === undefined) {
    return row("-", `ok (reachable; no model list: HTTP ${probe.status})`, true);
  }
  const listed = `${probe.models.length} models`;
  if (!agent.model || listsModel(probe.models, agent.model)) return row(listed, "ok", true);
  const some = probe.models.slice(0, 3).join(", ");
  return row(
    listed,
    `model ${JSON.stringify(agent.model)} not listed by the endpoint${
      some ? ` (e.g. ${some})` : ""
    }`,
    false,
  );
}

async function checkAgent(
  name: string,
  agent: Partial<AgentEntry>,
  env: (name: string) => string | undefined,
  endpointTimeoutMs: number,
): Promise<AgentRow> {
  const runner = agent.runner ?? "claude";
  if (isHttpRunner(runner)) return checkHttpAgent(name, runner, agent, env, endpointTimeoutMs);
  const adapter = CLI_ADAPTERS[runner];
  const command = agent.command ?? adapter.defaultCommand;
  const base = { name, runner, model: agent.model ?? "(default)" };
  const executable = command ? findOnPath(command, env) : null;
  if (!executable) {
    const where = command.includes("/") ? command : `${command || "(no command)"} on PATH`;
    return { ...base, executable, version: "-", status: `not found: ${where}`, ok: false };
  }
  // A CLI without a version probe (a `command` runner's program is the model itself).
  if (!adapter.versionArgs) {
    return { ...base, executable, version: "-", status: "ok", ok: true };
  }
  // As a child runs: with its adapter's variables (gemini's start-up switch) and its own env.
  const adapterEnv = adapter.env?.({ isRoot: runningAsRoot() }) ?? {};
  const probe = await probeVersion(
    executable,
    VERSION_TIMEOUT_MS,
    { ...adapterEnv, ...agent.env },
    adapter.versionArgs,
  );
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

function agentTable(agents: readonly AgentRow[]): string {
  return table([
    ["AGENT", "RUNNER", "MODEL", "EXECUTABLE", "VERSION", "STATUS"],
    ...agents.map((row) => [
      row.name,
      row.runner,
      row.model,
      row.executable ?? "-",
      row.version,
      row.status,
    ]),
  ]);
}

interface DoctorReport {
  text: string;
  problems: string[];
}

/** Runs every check (agents in parallel) and renders the report. */
export async function runDoctor(
  config: Readonly<Config>,
  env: (name: string) => string | undefined,
  endpointTimeoutMs = ENDPOINT_TIMEOUT_MS,
): Promise<DoctorReport> {
  const problems: string[] = [];
  const entries: [string, Partial<AgentEntry>][] = config.defaultAgents.map((a) => [a.name, a]);
  if (config.judge && (config.judge.runner || config.judge.command || config.judge.baseUrl)) {
    // An HTTP judge takes its endpoint from agent 0 when it runs the same runner.
    const inherits = config.defaultAgents.length > 0 &&
      isHttpRunner(config.judge.runner ?? config.defaultAgents[0].runner);
    entries.push([
      "judge",
      inherits ? judgeAgent(config.defaultAgents, config.judge) : config.judge,
    ]);
  }
  const agents = await Promise.all(
    entries.map(([name, a]) => checkAgent(name, a, env, endpointTimeoutMs)),
  );
  const bind = await bindOrGatewayStatus(config.host, config.port);
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
      `no agents: configure defaultAgents or install the ${discoverableNames()} CLI`,
    );
  }

  if (config.defaultAgents.some((agent) => !isHttpRunner(agent.runner))) {
    // Informational: both ways work; setsid(1) spares forking the gateway for each child.
    checks.push(["process groups", describeGroupSpawn(machineGroupSpawn()), "ok"]);
  }

  problems.push(...agents.filter((row) => !row.ok).map((row) => `${row.name}: ${row.status}`));
  let text = table(checks);
  if (agents.length) text += "\n" + agentTable(agents);
  if (bind.gateway) {
    const running = await gatewayHealth(bind.gateway, config.token);
    if (running.rows.length) text += "\n" + table(running.rows);
    if (running.note) text += `\n${running.note}\n`;
    problems.push(...running.problems);
  }
  text += seatsSummary(config, Date.now());
  text += "\n" +
    (problems.length === 0
      ? "doctor: all checks passed\n"
      : `doctor: ${problems.length} problem${problems.length === 1 ? "" : "s"}:\n` +
        problems.map((p) => `  - ${p}\n`).join(""));
  return { text, problems };
}
