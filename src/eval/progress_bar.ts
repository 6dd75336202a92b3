/** The eval's progress bar on stderr: runs done of all, passes, spend, and what is running. */

export interface ProgressState {
  done: number;
  total: number;
  passed: number;
  usd: number;
  running: readonly string[];
}

const WIDTH = 24;

/** One line of progress (pure). */
export function progressLine(state: ProgressState): string {
  const filled = state.total ? Math.round((state.done / state.total) * WIDTH) : WIDTH;
  const bar = "#".repeat(filled) + "-".repeat(WIDTH - filled);
  const running = state.running.length ? ` · running ${state.running.join(", ")}` : "";
  return `[${bar}] ${state.done}/${state.total} runs · ${state.passed} passed · ` +
    `$${state.usd.toFixed(2)}${running}`;
}

/** Writes progress: redrawn in place on a terminal, one line per change otherwise. */
export function progressWriter(write: (text: string) => void, terminal: boolean) {
  let last = "";
  return {
    update(state: ProgressState) {
      const line = progressLine(state);
      if (line === last) return;
      last = line;
      write(terminal ? `\r\x1b[K${line.slice(0, 160)}` : `${line}\n`);
    },
    /** Ends the redrawn line before other output. */
    end() {
      if (terminal && last) write("\n");
    },
  };
}
