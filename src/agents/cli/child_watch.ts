/**
 * Watches a CLI child through its run: its output into the run's recorder, and its process group
 * ended on the time-out, on an abort, or once its answer is in.
 */
import type { AgentConfig } from "../../config/mod.ts";
import type { ParsedLine, PreparedRunOptions } from "../types.ts";
import { cliAdapter } from "./runners.ts";
import type { RunningChild } from "../process/child_process.ts";
import type { RecorderSettings, RunIdentity, RunRecorder } from "../run_output.ts";

/** The child and what its run needs to watch it. */
interface WatchedChild {
  settings: Pick<RecorderSettings, "clock" | "logFor">;
  agent: AgentConfig;
  id: RunIdentity;
  cwd: string;
  child: RunningChild;
  /** Where the child's stderr lines go once it runs (retries some CLIs announce there). */
  stderr: { onLine?: (line: string) => void };
}

/** How a watched child's run came to its end. */
interface RunOver {
  timedOut: boolean;
  aborted: boolean;
  /** Its answer (a final result without error) came, and its group was ended then. */
  finalSeen: boolean;
  /** Answered or aborted with a wind-down taker: the run returns before the child has exited. */
  early: boolean;
}

/**
 * Reads a child's output into the recorder and ends its group on the time-out, on an abort and
 * once its answer is in; `over` settles when the child has exited, or at once on an abort or its
 * answer when the caller takes the wind-down. After that, nothing the child prints is recorded.
 */
export function watchChild(
  { settings, agent, id, cwd, child, stderr }: WatchedChild,
  recorder: RunRecorder,
  options: PreparedRunOptions,
): { over: Promise<RunOver> } {
  const adapter = cliAdapter(agent);
  const log = settings.logFor(options.turnId);
  const parse = adapter.createParser({ cwd });
  const state: RunOver = { timedOut: false, aborted: false, finalSeen: false, early: false };
  let closed = false;
  let cutShort: (() => void) | undefined;
  const timer = settings.clock.setTimeout(() => {
    state.timedOut = true;
    child.end();
  }, agent.timeoutMs);
  const onAbort = () => {
    state.aborted = true;
    child.end();
    if (options.onWindDown) cutShort?.();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  child.read((piece) => {
    if (closed) return;
    let parsed: ParsedLine[];
    try {
      parsed = parse(piece);
    } catch (err) {
      log.debug("{agent}: parser failed: {error}", { agent: id.agent, error: String(err) });
      parsed = [{ type: "invalid", line: piece }];
    }
    recorder.absorb(parsed);
    const ends = (item: ParsedLine) =>
      item.type === "final" && (!item.error || adapter.endsOnError === true);
    if (!state.finalSeen && parsed.some(ends)) {
      // Its answer is in; what a CLI does after it (flushing telemetry, tearing down) is nothing
      // the turn needs, so its group is ended now instead of waited for. A CLI reporting an
      // error is left to exit on its own (its exit code says more), unless it may never exit.
      state.finalSeen = true;
      child.end();
      if (options.onWindDown) cutShort?.();
    }
  });
  stderr.onLine = (line) => {
    if (closed) return;
    const retries = adapter.parseStderr?.(line).filter((item) => item.type === "retry");
    if (retries?.length) recorder.absorb(retries);
  };
  const early = new Promise<void>((resolve) => (cutShort = resolve));
  const over = Promise.race([child.exited, early.then(() => (state.early = true))]).then(() => {
    settings.clock.clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if (state.early) closed = true;
    return state;
  });
  return { over };
}
