/**
 * Small pure helpers the adapters share: reading one JSON line, and turning a tool call into
 * a short human-readable activity line such as "Read notes.txt" or "$ ls -la".
 */
import { oneLine } from "../../base/text.ts";

/** One stdout line as a JSON object, or why it is not one (blank lines are not errors). */
export function parseJsonLine(line: string): Record<string, unknown> | "blank" | "invalid" {
  const trimmed = line.trim();
  if (!trimmed) return "blank";
  if (!trimmed.startsWith("{")) return "invalid";
  try {
    const value = JSON.parse(trimmed);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value as Record<string, unknown>
      : "invalid";
  } catch {
    return "invalid";
  }
}

/** A plain object's field as an object (or undefined). */
export function objectField(value: unknown, key: string): Record<string, unknown> | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const field = (value as Record<string, unknown>)[key];
  return field !== null && typeof field === "object" && !Array.isArray(field)
    ? field as Record<string, unknown>
    : undefined;
}

/** A field as a string (or undefined). */
export function stringField(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === "string" ? field : undefined;
}

/** A field as a finite number (or undefined). */
export function numberField(value: unknown, key: string): number | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === "number" && Number.isFinite(field) ? field : undefined;
}

/** `{ [key]: value }` when the value is a number, else nothing (to spread into an object). */
export function counted<K extends string>(key: K, value: number | undefined) {
  return (value === undefined ? {} : { [key]: value }) as Partial<Record<K, number>>;
}

/** The most an activity line shows. */
const ACTIVITY_CHARS = 120;

/** An activity as one line of at most `ACTIVITY_CHARS`. */
export function activityText(text: string): string {
  return oneLine(text, ACTIVITY_CHARS);
}

/** A path relative to the working directory when it lies inside it. */
export function shortPath(path: string, cwd?: string): string {
  if (cwd) {
    const dir = cwd.endsWith("/") ? cwd : `${cwd}/`;
    if (path.startsWith(dir) && path.length > dir.length) return path.slice(dir.length);
  }
  return path;
}

/** `/bin/bash -lc 'ls -la'` → `ls -la` (codex wraps every command in a login shell). */
export function unwrapShell(command: string): string {
  const match = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1\s*$/.exec(command.trim());
  if (!match) return command;
  return match[1] === "'" ? match[2].replaceAll(`'\\''`, "'") : match[2];
}

const SHELL_TOOLS = new Set(["bash", "run_shell_command", "shell", "exec_command"]);
const READ_TOOLS = new Set(["read", "read_file", "view", "read_many_files"]);
const WRITE_TOOLS = new Set(["write", "write_file"]);
const EDIT_TOOLS = new Set(["edit", "multiedit", "replace", "notebookedit"]);
const SEARCH_TOOLS = new Set(["grep", "grep_search", "search_file_content", "glob"]);
const WEB_SEARCH_TOOLS = new Set(["websearch", "web_search", "google_web_search"]);
const AGENT_TOOLS = new Set(["task", "agent", "invoke_agent"]);

/** "Read notes.txt", "$ ls -la", "Grep TODO", "Agent: Find notes", or the tool's name. */
export function describeToolCall(name: string, input: unknown, cwd?: string): string {
  const key = name.toLowerCase();
  const str = (field: string) => stringField(input, field);
  const path = str("file_path") ?? str("path") ?? str("absolute_path") ?? str("notebook_path") ??
    str("dir_path");
  let text: string;
  if (SHELL_TOOLS.has(key)) text = `$ ${unwrapShell(str("command") ?? str("cmd") ?? "")}`;
  else if (READ_TOOLS.has(key)) text = `Read ${path ? shortPath(path, cwd) : ""}`;
  else if (WRITE_TOOLS.has(key)) text = `Write ${path ? shortPath(path, cwd) : ""}`;
  else if (EDIT_TOOLS.has(key)) text = `Edit ${path ? shortPath(path, cwd) : ""}`;
  else if (SEARCH_TOOLS.has(key)) {
    text = `${key === "glob" ? "Glob" : "Grep"} ${str("pattern") ?? str("query") ?? ""}`;
  } else if (key === "list_directory" || key === "ls") {
    text = `List ${path ? shortPath(path, cwd) : "."}`;
  } else if (key === "webfetch" || key === "web_fetch") text = `Fetch ${str("url") ?? ""}`;
  else if (WEB_SEARCH_TOOLS.has(key)) text = `Search ${str("query") ?? ""}`;
  else if (AGENT_TOOLS.has(key)) {
    text = `Agent: ${str("description") ?? str("subagent_type") ?? str("prompt") ?? ""}`;
  } else {
    const firstString = input && typeof input === "object"
      ? Object.values(input).find((v): v is string => typeof v === "string")
      : undefined;
    text = firstString ? `${name} ${firstString}` : name;
  }
  return activityText(text);
}
