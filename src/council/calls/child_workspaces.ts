/**
 * Where the children of a fanned-out answer turn work: each that can touch files in its own
 * isolated copy of the workspace (its changes read back, one candidate's applied), all in the
 * real one (`isolation: shared`), or all read-only when no copy can be made.
 */
import { createHash } from "node:crypto";
import type { AgentPrompt, ChildAccess } from "../../agents/types.ts";
import { isHttpRunner } from "../../config/mod.ts";
import { type Changes, describeFiles } from "../../workspace/changes.ts";
import type { Copy } from "../../workspace/copies.ts";
import type { IsolatedWorkspace, Isolator } from "../../workspace/isolation.ts";
import type { ChildReply, Placement } from "./children.ts";
import type { ChildPlan } from "../plan/plan.ts";
import { counted, oneLine } from "../../base/text.ts";
import { isolatedWorkspaceNote } from "../prompt/prompts.ts";
import { mapPromptText, withSectionBeforeTask } from "../prompt/prompt_edit.ts";
import type { TurnContext } from "../turn/context.ts";

/** What became of the chosen changes. */
export type ApplyStatus = "applied" | "refused" | "conflict" | "none";

/** A synthesizer reads each candidate's diff up to this many characters. */
const MAX_DIFF_CHARS = 20_000;

type Mode =
  /** Children write where the turn works (the real cwd, or each its own temp dir). */
  | { kind: "shared" }
  /** `copyOf`: each child with a copy (by child index) and its copy's index. */
  | { kind: "isolated"; workspace: IsolatedWorkspace; copyOf: ReadonlyMap<number, number> }
  | { kind: "read-only" };

/**
 * Whether a child can touch files and so needs a copy of its own: a model API only answers
 * (the gateway runs no tools for it); a CLI or a command works in its directory.
 */
function touchesFiles(child: ChildPlan): boolean {
  return !isHttpRunner(child.agent.runner);
}

export class ChildWorkspaces {
  #turn: TurnContext;
  #mode: Mode;
  /** Each child's changes, by child index, once read back. */
  #changes = new Map<number, Changes>();
  /** Settles once `dispose` is over: kept copies are then clean for the session's next turn. */
  readonly #disposed = Promise.withResolvers<void>();

  private constructor(turn: TurnContext, mode: Mode) {
    this.#turn = turn;
    this.#mode = mode;
  }

  /** Decides where `children` work, making their copies when isolation applies. */
  static async prepare(
    turn: TurnContext,
    children: readonly ChildPlan[],
    isolator: Isolator | undefined,
  ): Promise<ChildWorkspaces> {
    const { config } = turn.env;
    const cwd = turn.request.cwd;
    // Without a cwd each child gets an empty temp dir of its own: nothing to share.
    if (!cwd || config.isolation === "shared") return new ChildWorkspaces(turn, { kind: "shared" });
    const readOnly = (reason: string) => {
      turn.progress(`children run read-only: ${reason}`, "info");
      return new ChildWorkspaces(turn, { kind: "read-only" });
    };
    const writers = children.filter(touchesFiles);
    // Making copies nobody works in would cost the turn their time (seconds in a large project).
    if (writers.length === 0) {
      turn.progress(
        "no isolated workspaces: the children are model APIs, which touch no files",
        "info",
      );
      return new ChildWorkspaces(turn, { kind: "read-only" });
    }
    const count = writers.length;
    if (!isolator) return readOnly("no state directory for isolated workspaces (set HOME)");
    turn.progress(`preparing ${counted(count, "isolated workspace")} for the children`, "info");
    const started = turn.env.clock.now();
    const made = await isolator.isolate(cwd, count, {
      turnId: turn.request.id,
      slot: workspaceSlot(turn.request.sessionKey),
      signal: turn.signal,
    });
    if (!made.ok) return readOnly(made.reason);
    const seconds = ((turn.env.clock.now() - started) / 1000).toFixed(1);
    const answerOnly = children.length - count;
    turn.progress(
      madeLine(made.workspace, seconds) +
        (answerOnly > 0 ? ` (none for ${counted(answerOnly, "model API")})` : ""),
      "info",
    );
    const copyOf = new Map(writers.map((child, copy) => [child.index, copy]));
    return new ChildWorkspaces(turn, { kind: "isolated", workspace: made.workspace, copyOf });
  }

  /** The child's own copy and its index, when it has one. */
  #copyOf(child: ChildPlan): { copy: Copy; index: number } | undefined {
    if (this.#mode.kind !== "isolated") return undefined;
    const index = this.#mode.copyOf.get(child.index);
    return index === undefined ? undefined : { copy: this.#mode.workspace.copies[index], index };
  }

  /** Where a child works and what it may do there. */
  place(child: ChildPlan): Placement {
    switch (this.#mode.kind) {
      case "shared":
        return { access: "workspace-write" };
      case "read-only":
        return { access: "read-only" };
      case "isolated": {
        const own = this.#copyOf(child);
        if (!own) return { access: "read-only" };
        // A kept copy is the same directory on the session's next turn: a child may wait there.
        const lasts = this.#mode.workspace.kept
          ? { reusedAfter: this.#disposed.promise }
          : { scratch: true };
        return { cwd: own.copy.cwd, access: "workspace-write", ...lasts };
      }
    }
  }

  /** What the synthesizer may do in the real workspace: only look, unless children share it. */
  get synthAccess(): ChildAccess {
    return this.#mode.kind === "shared" ? "workspace-write" : "read-only";
  }

  /** A child's prompt, its paths pointing into the child's own copy. */
  prompt(child: ChildPlan, prompt: AgentPrompt): AgentPrompt {
    const copy = this.#copyOf(child)?.copy;
    if (this.#mode.kind !== "isolated" || !copy) return prompt;
    const { workspace } = this.#mode;
    const moved = mapPromptText(prompt, (text) => replacePath(text, workspace.realRoot, copy.root));
    return withSectionBeforeTask(moved, isolatedWorkspaceNote(copy.cwd));
  }

  /** A child's answer, its paths pointing back into the real workspace. */
  answer(child: ChildPlan, text: string): string {
    const copy = this.#copyOf(child)?.copy;
    if (this.#mode.kind !== "isolated" || !copy) return text;
    return replacePath(text, copy.root, this.#mode.workspace.realRoot);
  }

  /** Reads back what a finished child changed, and says so on progress. */
  async collect({ child }: ChildReply): Promise<void> {
    const own = this.#copyOf(child);
    if (this.#mode.kind !== "isolated" || !own || this.#turn.signal.aborted) return;
    try {
      const changes = await this.#mode.workspace.changes(own.index, this.#turn.signal);
      this.#changes.set(child.index, changes);
      this.#turn.progress(`${child.label} changed ${describeFiles(changes.files)}`, "info");
    } catch (err) {
      if (this.#turn.signal.aborted) return;
      this.#turn.progress(
        `cannot read ${child.label}'s changes: ${oneLine(String(err))}`,
        "info",
      );
    }
  }

  /** The child's changes, when it changed any files. */
  changesOf(child: ChildPlan): Changes | undefined {
    const changes = this.#changes.get(child.index);
    return changes && changes.files.length > 0 ? changes : undefined;
  }

  /** The diff a synthesizer reads for a child, when it changed files. */
  async diffOf(child: ChildPlan): Promise<string | undefined> {
    const changes = this.changesOf(child);
    if (!changes || this.#mode.kind !== "isolated") return undefined;
    try {
      return await this.#mode.workspace.patch(changes, MAX_DIFF_CHARS, this.#turn.signal);
    } catch (err) {
      // The files and their counts are known; only the text is missing.
      return `(the diff cannot be shown: ${oneLine(String(err))}; it changes ` +
        `${describeFiles(changes.files)})`;
    }
  }

  /**
   * Applies the chosen child's changes to the real workspace; returns the line that ends the
   * answer (what changed, or why nothing was written) and what became of them (the record's).
   */
  async apply(child: ChildPlan): Promise<{ line: string; status: ApplyStatus }> {
    const changes = this.changesOf(child);
    if (!changes || this.#mode.kind !== "isolated") {
      return { line: "No files were changed.", status: "none" };
    }
    const files = describeFiles(changes.files);
    // Not the turn's signal: a cancel after this point must not leave half a patch behind.
    const result = await this.#mode.workspace.apply(changes).catch((err) => ({
      applied: false as const,
      reason: oneLine(err instanceof Error ? err.message : String(err)),
      conflicts: [] as string[],
    }));
    if (!result.applied) {
      this.#turn.log.warn("{label}'s changes not applied: {reason}", {
        label: child.label,
        reason: result.reason,
      });
      const line = `The chosen changes (from ${child.label}: ${files}) were NOT applied: ` +
        `${result.reason}. Nothing was written.`;
      return { line, status: result.conflicts.length > 0 ? "conflict" : "refused" };
    }
    this.#turn.log.info("applied {label}'s changes: {files}", { label: child.label, files });
    return {
      line: `Changes applied to the workspace (from ${child.label}): ${files}.`,
      status: "applied",
    };
  }

  /** Removes the copies, or cleans and keeps them for the session. Safe to call more than once. */
  async dispose(): Promise<void> {
    if (this.#mode.kind !== "isolated") return;
    try {
      await this.#mode.workspace.dispose();
    } catch (err) {
      this.#turn.log.warn("cannot remove the turn's workspaces: {error}", { error: String(err) });
    } finally {
      this.#disposed.resolve();
    }
  }
}

/** The progress line saying where the children work and how long that took. */
function madeLine(workspace: IsolatedWorkspace, seconds: string): string {
  if (workspace.kind === "copy") {
    return `each child works in its own copy of the directory, made in ${seconds} s`;
  }
  const where = "each child works in its own git worktree (HEAD plus uncommitted changes)";
  if (workspace.reset === 0) return `${where}, made in ${seconds} s`;
  const made = workspace.copies.length - workspace.reset;
  const reset = counted(workspace.reset, "isolated workspace");
  return `${where}: reset ${reset} kept from the session's last turn` +
    `${made > 0 ? ` and made ${made}` : ""} in ${seconds} s`;
}

/**
 * The session's workspace slot: a short hash of its key, so every turn of a session puts its
 * children in the same paths (their prompts' prefixes then stay byte-identical across turns).
 */
export function workspaceSlot(sessionKey: string): string {
  return createHash("sha256").update(`workspace:${sessionKey}`).digest("hex").slice(0, 16);
}

/** `text` with every mention of the directory `from` (and paths below it) moved to `to`. */
export function replacePath(text: string, from: string, to: string): string {
  const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`${escaped}(?![\\w.-])`, "g"), to);
}
