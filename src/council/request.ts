/**
 * Derives a TurnRequest from protocol-free input: working directory, classified ask, session key.
 */
import type { TranscriptEntry, TurnInput, TurnRequest } from "./types.ts";

// Compiled once: these run on every request.
const WORKING_DIR_LINE = /(?:working directory|cwd):[ \t]*(\/[^\n\r]*)/i;
const CODEX_CWD = /<environment_context>[\s\S]*?<cwd>([^<]+)<\/cwd>/i;
const SCAFFOLDING = new RegExp(
  [
    "system-reminder",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "environment_context",
    "user_instructions",
    "user-prompt-submit-hook",
  ].map((tag) => `<${tag}\\b[^>]*>[\\s\\S]*?</${tag}>`).join("|"),
  "gi",
);

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Finds a candidate working directory in text (system prompt or a message). */
export function findWorkingDirectory(text: string): string | undefined {
  const codex = CODEX_CWD.exec(text);
  if (codex) return codex[1].trim();
  const line = WORKING_DIR_LINE.exec(text);
  if (line) return line[1].trim();
  return undefined;
}

/**
 * SPEC §1.1.3: the first absolute path named in the system prompt or the transcript that
 * exists as a directory; undefined otherwise (children then run in an empty temp dir).
 */
export function recoverWorkingDirectory(
  system: string,
  transcript: readonly TranscriptEntry[],
  exists: (path: string) => boolean = isDirectory,
): string | undefined {
  const texts = [system, ...transcript.map((e) => ("text" in e ? e.text : ""))];
  for (const text of texts) {
    const found = findWorkingDirectory(text);
    if (found && found.startsWith("/") && exists(found)) return found;
  }
  return undefined;
}

/** Removes injected harness scaffolding (system reminders, IDE context, command wrappers). */
export function stripScaffolding(text: string): string {
  return text.replace(SCAFFOLDING, "").trim();
}

/** SPEC §1.1.4: the last user message, scaffolding stripped; the raw text if nothing is left. */
export function classifyAsk(transcript: readonly TranscriptEntry[]): string {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const entry = transcript[i];
    if (entry.kind !== "user") continue;
    const stripped = stripScaffolding(entry.text);
    return stripped || entry.text.trim();
  }
  return "";
}

/** SHA-256 hex of system prompt + first user message (SPEC §2.4). */
export async function sessionKeyOf(
  system: string,
  transcript: readonly TranscriptEntry[],
): Promise<string> {
  const first = transcript.find((e) => e.kind === "user");
  const data = new TextEncoder().encode(
    `${system}\u0000${first && "text" in first ? first.text : ""}`,
  );
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Builds the council's TurnRequest from what the protocol layer extracted. */
export async function newTurnRequest(input: TurnInput): Promise<TurnRequest> {
  return {
    ...input,
    id: crypto.randomUUID().slice(0, 8),
    cwd: recoverWorkingDirectory(input.system, input.transcript),
    ask: classifyAsk(input.transcript),
    sessionKey: await sessionKeyOf(input.system, input.transcript),
  };
}
