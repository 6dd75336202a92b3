/**
 * Recovers the host's working directory from the texts the host itself wrote (CONTRACT.md §1.1.3).
 */
import { isAbsolute, sep } from "node:path";
import type { TranscriptEntry } from "../types.ts";

/** Where children may run: config `workspaceRoots` (empty = anywhere but system directories). */
export interface WorkspacePolicy {
  workspaceRoots?: readonly string[];
}

/** The directory children run in (undefined = an empty temp dir) and why a named one was not. */
interface WorkingDirectory {
  path?: string;
  /** Set when the host named a directory the gateway would not use. */
  note?: string;
}

/**
 * The host's own formats first, so that other text in the prompt (an MCP server's instructions,
 * a CLAUDE.md) cannot move the children: Claude Code's main agent, its subagents' `<env>` block,
 * Codex's `<environment_context>`, then any `cwd:` line.
 */
const RULES: { pattern: RegExp; inConversation: boolean }[] = [
  { pattern: /primary working directory:[ \t]*(\/[^\n\r]*)/gi, inConversation: false },
  { pattern: /(?:^|[^a-z])working directory:[ \t]*(\/[^\n\r]*)/gi, inConversation: false },
  { pattern: /<environment_context>[\s\S]*?<cwd>([^<]+)<\/cwd>/gi, inConversation: true },
  { pattern: /(?:^|[^a-z])cwd:[ \t]*(\/[^\n\r]*)/gi, inConversation: false },
];

/** Directories whose whole tree is never a workspace. */
const SYSTEM_TREES = [
  "/etc",
  "/usr",
  "/bin",
  "/sbin",
  "/boot",
  "/dev",
  "/proc",
  "/sys",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/System",
  "/private/etc",
];
/** Directories that are never a workspace themselves, though projects may live below them. */
const SYSTEM_ROOTS = ["/", "/root", "/home", "/Users", "/opt", "/srv", "/Library"];
/** `/var` holds system state, except its temp and per-user folders (macOS's temp dir is there). */
const VAR_TREES = ["/var", "/private/var"];
const VAR_USER_DIRS = ["tmp", "folders"];

const within = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** True for the filesystem root and system directories, which children must never work in. */
export function isSystemDirectory(path: string): boolean {
  if (SYSTEM_ROOTS.includes(path) || SYSTEM_TREES.some((root) => within(path, root))) return true;
  return VAR_TREES.some((root) =>
    within(path, root) && !VAR_USER_DIRS.some((dir) => within(path, `${root}/${dir}`))
  );
}

/**
 * Every candidate the host named, best first. Only host-written text counts: the system prompt
 * and mid-conversation system messages (Claude Code 2.1.330 puts its environment block in one);
 * in user messages only Codex's `<environment_context>`; tool results and assistant text never.
 */
export function workingDirectoryCandidates(
  system: string,
  transcript: readonly TranscriptEntry[],
): string[] {
  const hostTexts = [system, ...transcript.flatMap((e) => e.kind === "system" ? [e.text] : [])];
  const userTexts = transcript.flatMap((e) => e.kind === "user" ? [e.text] : []);
  return RULES.flatMap(({ pattern, inConversation }) =>
    [...hostTexts, ...(inConversation ? userTexts : [])].flatMap((text) =>
      [...text.matchAll(pattern)].map((m) => m[1].trim())
    )
  ).filter((path) => isAbsolute(path));
}

function realDirectory(path: string): string | undefined {
  try {
    const real = Deno.realPathSync(path);
    return Deno.statSync(real).isDirectory ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The first candidate that exists as a directory, resolved (`..`, symlinks), then held to the
 * policy: a system directory, or one outside `workspaceRoots`, gives a temp dir and a note.
 */
export function recoverWorkingDirectory(
  system: string,
  transcript: readonly TranscriptEntry[],
  policy: WorkspacePolicy = {},
  resolve: (path: string) => string | undefined = realDirectory,
): WorkingDirectory {
  for (const candidate of workingDirectoryCandidates(system, transcript)) {
    const path = resolve(candidate);
    if (path === undefined) continue;
    if (isSystemDirectory(path)) {
      return { note: `working directory ${path} is a system directory; children use a temp dir` };
    }
    const roots = policy.workspaceRoots ?? [];
    if (roots.length > 0 && !roots.some((root) => within(path, resolve(root) ?? root))) {
      return {
        note: `working directory ${path} is outside workspaceRoots; children use a temp dir`,
      };
    }
    return { path };
  }
  return {};
}
