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
  const out = await new Deno.Command("ps", { args: ["-e", "-o", "pid=,ppid="] }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n").map((line) => {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    return [pid, ppid];
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
}

/** The process tree under `root`: how many processes, and their summed PSS in MB. */
export async function treeMemory(root: number): Promise<TreeMemory> {
  const pids = descendantsOf(root, await processTable());
  const kb = await Promise.all(pids.map(pssKb));
  return { processes: pids.length, pssMb: kb.reduce((a, b) => a + b, 0) / 1024 };
}
