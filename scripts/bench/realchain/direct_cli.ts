/**
 * One real CLI run by the bench itself, without the gateway: the argv and environment the
 * gateway's adapter gives it (optionally changed), the prompt on stdin at once or after a
 * pause, timed against the stub upstream's records; plus what an idle started CLI costs in
 * memory and CPU (its whole process group, from /proc).
 */
import { join } from "node:path";
import { CLI_ADAPTERS } from "../../../src/agents/cli/runners.ts";
import { MODELS, pointingArgs, pointingEnv } from "./clis.ts";
import { type ChainStub, epochNow, type Vendor } from "./upstream.ts";

/** A start-up switch: variables and/or arguments added to a CLI's invocation. */
export interface Switch {
  label: string;
  env?: Record<string, string>;
  args?: string[];
}

/** The compile cache the bench's Node CLIs share, as the gateway's children share theirs. */
export const BENCH_COMPILE_CACHE = join(
  Deno.env.get("TMPDIR") ?? "/tmp",
  "council-bench-node-compile-cache",
);

/** The invocation the gateway's adapter builds, with `extraArgs` among the agent's own args. */
export function adapterInvocation(
  vendor: Vendor,
  stubOrigin: string,
  home: string,
  extraArgs: readonly string[] = [],
): { args: string[]; env: Record<string, string> } {
  const adapter = CLI_ADAPTERS[vendor];
  const agent = {
    name: vendor,
    runner: vendor,
    model: MODELS[vendor],
    args: [...pointingArgs(vendor, stubOrigin), ...extraArgs],
    env: {},
    timeoutMs: 120_000,
  } as unknown as Parameters<typeof adapter.argv>[0];
  const isRoot = Deno.uid() === 0;
  return {
    args: adapter.argv(agent, { role: "child", model: MODELS[vendor] }),
    env: {
      ...adapter.env?.({ isRoot, nodeCompileCache: BENCH_COMPILE_CACHE }),
      ...pointingEnv(vendor, stubOrigin, home),
    },
  };
}

/** `args` without any occurrence of the contiguous sequence `remove`. */
export function withoutSequence(args: readonly string[], remove: readonly string[]): string[] {
  if (remove.length === 0) return [...args];
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (remove.every((word, j) => args[i + j] === word)) i += remove.length - 1;
    else out.push(args[i]);
  }
  return out;
}

/** The invocation with every switch in `all` taken out (whatever the adapter ships). */
export function bareInvocation(
  invocation: { args: string[]; env: Record<string, string> },
  all: readonly Switch[],
): { args: string[]; env: Record<string, string> } {
  let args = invocation.args;
  const env = { ...invocation.env };
  for (const s of all) {
    if (s.args) args = withoutSequence(args, s.args);
    for (const name of Object.keys(s.env ?? {})) delete env[name];
  }
  return { args, env };
}

/** The children's user + system CPU time from bash's `times` output (its second line), ms. */
export function childrenCpuMs(times: string): number {
  const line = times.trim().split("\n")[1] ?? "";
  const parts = [...line.matchAll(/(\d+)m([\d.,]+)s/g)];
  if (parts.length !== 2) return NaN;
  return parts.reduce(
    (sum, [, m, s]) => sum + (Number(m) * 60 + Number(s.replace(",", "."))) * 1000,
    0,
  );
}

export interface DirectRun {
  /** User + system CPU time of the CLI and the descendants it waited for, ms. */
  cpuMs: number;
  /** Spawn (or, pre-started, the prompt's write) → first upstream request, ms. */
  firstRequestMs: number;
  /** Spawn (or the prompt's write) → exit, ms. */
  exitMs: number;
  exitCode: number;
  /** Pre-started only: the idle process group just before the prompt was written. */
  idle?: GroupUsage;
  /** Pre-started only: the CLI had exited before the prompt was written. */
  exitedEarly?: boolean;
}

export interface GroupUsage {
  processes: number;
  rssMb: number;
  /** Proportional set size: shared pages split among their users (what it really adds). */
  pssMb: number;
  /** User + system CPU time the group has used so far, ms. */
  cpuMs: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** Memory and CPU of every process in process group `pgid` (Linux /proc). */
export async function groupUsage(pgid: number): Promise<GroupUsage> {
  const usage: GroupUsage = { processes: 0, rssMb: 0, pssMb: 0, cpuMs: 0 };
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      const rollup = await Deno.readTextFile(`/proc/${entry.name}/smaps_rollup`);
      const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(rollup)?.[1]);
      usage.processes++;
      usage.rssMb += kb("Rss") / 1024;
      usage.pssMb += kb("Pss") / 1024;
      usage.cpuMs += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    } catch { /* gone meanwhile, or not ours to read */ }
  }
  return usage;
}

export interface Prestart {
  /** How long the CLI sits started before the prompt is written. */
  waitMs: number;
  /** Written to stdin at spawn (e.g. "\n": a CLI that gives up on a silent stdin then waits). */
  primer: string;
}

/**
 * Runs `path` once with the prompt on stdin: at once, or pre-started (the prompt written
 * `prestart.waitMs` after the spawn; then times count from the prompt's write, and the idle
 * group is measured just before it).
 */
export async function runDirect(
  vendor: Vendor,
  path: string,
  invocation: { args: string[]; env: Record<string, string> },
  stub: ChainStub,
  prompt: string,
  prestart?: Prestart,
): Promise<DirectRun> {
  const cwd = await Deno.makeTempDir({ prefix: "realchain-cli-" });
  const seen = stub.records.length;
  let t0 = epochNow();
  const timesPath = `${cwd}.times`;
  // Through bash, whose `times` then reports the CPU the CLI and its waited-for descendants used:
  // a measure of start-up work that the machine's load hardly moves, unlike wall time.
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      'f=$1; shift; "$@"; s=$?; times >"$f"; exit $s',
      "bash",
      timesPath,
      path,
      ...invocation.args,
    ],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...invocation.env },
    clearEnv: true,
    cwd,
    detached: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  child.status.then(() => (exited = true));
  const writer = child.stdin.getWriter();
  try {
    let idle: GroupUsage | undefined;
    let exitedEarly: boolean | undefined;
    if (prestart) {
      if (prestart.primer) await writer.write(new TextEncoder().encode(prestart.primer));
      await new Promise((resolve) => setTimeout(resolve, prestart.waitMs));
      idle = await groupUsage(child.pid);
      exitedEarly = exited;
      t0 = epochNow();
    }
    await writer.write(new TextEncoder().encode(prompt)).catch(() => {});
    await writer.close().catch(() => {});
    const status = await child.status;
    const exitMs = epochNow() - t0;
    const first = stub.records.slice(seen).find((r) => r.vendor === vendor);
    const times = await Deno.readTextFile(timesPath).catch(() => "");
    return {
      cpuMs: childrenCpuMs(times),
      firstRequestMs: first ? first.arrivedAt - t0 : NaN,
      exitMs,
      exitCode: status.code,
      idle,
      exitedEarly,
    };
  } finally {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* the group has ended */ }
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
    await Deno.remove(timesPath).catch(() => {});
  }
}
