/** Agents found on PATH when none are configured, and the PATH lookup it rests on. */
import { join } from "node:path";
import { type AgentEntry, AgentSchema, DEFAULT_MODELS } from "./schema.ts";

type Env = (name: string) => string | undefined;

function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    // mode is null on Windows, where the extension decides.
    return info.isFile && (info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** Finds an executable on PATH (honouring PATHEXT on Windows); its path, or null. */
export function findOnPath(command: string, env: Env): string | null {
  const windows = Deno.build.os === "windows";
  const extensions = windows
    ? ["", ...(env("PATHEXT") ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  if (command.includes("/") || (windows && command.includes("\\"))) {
    return extensions.map((ext) => command + ext).find(isExecutableFile) ?? null;
  }
  for (const dir of (env("PATH") ?? "").split(windows ? ";" : ":")) {
    if (!dir) continue;
    for (const ext of extensions) {
      const candidate = join(dir, command + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** When no agents are configured: the claude / codex / gemini CLIs found on PATH. */
export function discoverAgents(env: Env): AgentEntry[] {
  return (["claude", "codex", "gemini"] as const)
    .filter((runner) => findOnPath(runner, env) !== null)
    .map((runner) => AgentSchema.parse({ runner, model: DEFAULT_MODELS[runner] }));
}
