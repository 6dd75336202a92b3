/**
 * The memory of a process and all its descendants (a gateway and the children its warm pool
 * keeps waiting): their count and summed PSS (shared pages split among sharers, so many node
 * processes are not counted many times over), read from /proc (Linux).
 */

/** Pids of `root` and every process below it, from `ps`'s pid/ppid table. */
export function descendantsOf(root: number, table: readonly [number, number][]): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table) children.set(ppid, [...children.get(ppid) ?? [], pid]);
  const out: number[] = [];
  const pending = [root];
  while (pending.length) {
    const pid = pending.pop()!;
    out.push(pid);
    pending.push(...children.get(pid) ?? []);
  }
  return out;
}

async function processTable(): Promise<[number, number][]> {
  const ps = new Deno.Command("ps", { args: ["-e", "-o", "pid=,ppid="], stdout: "piped" }).spawn();
  const out = await ps.output();
  return new TextDecoder().decode(out.stdout).trim().split("\n").flatMap((line) => {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    // `ps` lists itself, a child of the bench's process at that moment.
    return pid === ps.pid ? [] : [[pid, ppid] as [number, number]];
  });
}

async function pssKb(pid: number): Promise<number> {
  try {
    const text = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0; // Gone meanwhile, or not Linux.
  }
}

/** A process tree's size. */
export interface TreeMemory {
  processes: number;
  pssMb: number;
  /** Processes beside the gateway's own (itself and its watchdog): its children at work or waiting. */
  children: number;
}

/** The gateway's watchdog names itself so in its argv (src/agents/process/watchdog.ts). */
const WATCHDOG = "council-gateway-watchdog";

async function commandLine(pid: number): Promise<string> {
  try {
    return (await Deno.readTextFile(`/proc/${pid}/cmdline`)).replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** The process tree under `root`: how many processes, their summed PSS in MB, its children. */
export async function treeMemory(root: number): Promise<TreeMemory> {
  const table = await processTable();
  const pids = descendantsOf(root, table);
  const kb = await Promise.all(pids.map(pssKb));
  const own = new Set([root]);
  for (const pid of pids) {
    if ((await commandLine(pid)).includes(WATCHDOG)) {
      for (const below of descendantsOf(pid, table)) own.add(below);
    }
  }
  return {
    processes: pids.length,
    pssMb: kb.reduce((a, b) => a + b, 0) / 1024,
    children: pids.filter((pid) => !own.has(pid)).length,
  };
}
