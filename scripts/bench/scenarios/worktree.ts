/**
 * Isolated workspaces on a repository of 10,000 files (about 43 MB checked out): the time to
 * make one child's worktree and three children's, the disk each takes, and the time to remove
 * them, against copying the checkout with `cp -a` as the baseline; and a session's kept
 * worktrees: cleaned at its turn's end and reset at its next turn, after each child changed a file
 * and added one.
 */
import { join } from "node:path";
import { Isolator } from "../../../src/workspace/isolation.ts";
import { type Figure, summarize } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";

const DIRS = 500;
const FILES_PER_DIR = 20;
const LINE = "export const value = 'a reasonably long line of source code for the bench';\n";

function git(cwd: string, ...args: string[]): void {
  const out = new Deno.Command("git", {
    args: ["-C", cwd, "-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args],
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (!out.success) throw new Error(`git ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
}

/** A repository of DIRS × FILES_PER_DIR source files, committed, with a few changes on top. */
async function makeRepository(dir: string): Promise<void> {
  await Deno.mkdir(dir);
  for (let d = 0; d < DIRS; d++) {
    await Deno.mkdir(join(dir, `module${d}`));
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const text = `// module ${d}, file ${f}\n${LINE.repeat(20 + ((d * 7 + f) % 40))}`;
      await Deno.writeTextFile(join(dir, `module${d}`, `file${f}.ts`), text);
    }
  }
  git(dir, "init", "--quiet");
  git(dir, "add", "--all");
  git(dir, "commit", "--quiet", "-m", "bench");
  await Deno.writeTextFile(join(dir, "module0", "file0.ts"), "// edited, not committed\n");
  await Deno.writeTextFile(join(dir, "untracked.ts"), "// untracked\n");
}

function diskMb(path: string): number {
  const out = new Deno.Command("du", { args: ["-sk", path], stdout: "piped" }).outputSync();
  return Number(new TextDecoder().decode(out.stdout).split("\t")[0]) / 1024;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

export const worktree: Scenario = {
  name: "worktree",
  description: "isolated workspaces: worktrees of a 10,000-file repository, time and disk",
  async run(context: BenchContext) {
    const repo = join(context.tempDir, "worktree-repo");
    context.log(`worktree: making a repository of ${DIRS * FILES_PER_DIR} files`);
    await makeRepository(repo);
    const isolator = new Isolator({ root: join(context.tempDir, "worktree-state") });
    const samples = { one: [] as number[], three: [] as number[], remove: [] as number[] };
    const copies: number[] = [];
    let perWorktreeMb = NaN;
    for (let i = 0; i < runs(context, 5, 1); i++) {
      for (const count of [1, 3]) {
        const made = await timed(() => isolator.isolate(repo, count, { turnId: `bench${i}` }));
        if (!made.value.ok) throw new Error(made.value.reason);
        const { workspace } = made.value;
        (count === 1 ? samples.one : samples.three).push(made.ms);
        perWorktreeMb = diskMb(workspace.copies[0].root);
        samples.remove.push((await timed(() => workspace.dispose())).ms / count);
      }
      const target = join(context.tempDir, `worktree-copy-${i}`);
      const copy = await timed(() =>
        new Deno.Command("cp", { args: ["-a", repo, target] }).output()
      );
      copies.push(copy.ms);
      await Deno.remove(target, { recursive: true });
    }
    const kept = await keptSlotTimes(context, repo);
    const checkoutMb = diskMb(repo) - diskMb(join(repo, ".git"));
    const figure = (name: string, unit: string, value: Figure["gateway"], note?: string) => ({
      scenario: "worktree",
      name,
      unit,
      gateway: value,
      ...(note ? { note } : {}),
    });
    const figures: Figure[] = [
      {
        ...figure("make 1 child's worktree", "ms", summarize(samples.one)),
        baseline: { label: "cp -a of the repository", value: summarize(copies) },
      },
      figure("make 3 children's worktrees", "ms", summarize(samples.three)),
      figure("remove one worktree", "ms", summarize(samples.remove)),
      figure("a session's 3 kept worktrees: clean at the turn's end", "ms", summarize(kept.clean)),
      figure("a session's 3 kept worktrees: reset at its next turn", "ms", summarize(kept.reset)),
      figure("disk per worktree", "MB", perWorktreeMb, `checkout ${checkoutMb.toFixed(1)} MB`),
    ];
    const details = { files: DIRS * FILES_PER_DIR, checkoutMb, ...samples, copies, kept };
    return { figures, details };
  },
};

/**
 * A session's turns with its worktrees kept: each turn's three children change a file and add
 * one, the turn's end cleans them (`dispose`), and the next turn resets them to the workspace's
 * state, which gained an edit meanwhile.
 */
async function keptSlotTimes(context: BenchContext, repo: string) {
  const isolator = new Isolator({
    root: join(context.tempDir, "worktree-kept-state"),
    keep: { idleMs: 3_600_000 },
  });
  const times = { clean: [] as number[], reset: [] as number[] };
  try {
    for (let turn = 0; turn <= runs(context, 5, 1); turn++) {
      await Deno.writeTextFile(join(repo, "module1", "file1.ts"), `// the user's edit ${turn}\n`);
      const made = await timed(() =>
        isolator.isolate(repo, 3, { turnId: `kept${turn}`, slot: "s" })
      );
      if (!made.value.ok) throw new Error(made.value.reason);
      // The first turn makes the worktrees; the later ones reset them.
      if (turn > 0) times.reset.push(made.ms);
      const { workspace } = made.value;
      for (const copy of workspace.copies) {
        await Deno.writeTextFile(join(copy.root, "module2", "file2.ts"), "// a child's edit\n");
        await Deno.writeTextFile(join(copy.root, `added-${turn}.ts`), "// a child's new file\n");
      }
      times.clean.push((await timed(() => workspace.dispose())).ms);
    }
  } finally {
    await isolator.shutdown();
  }
  return times;
}
