/**
 * The agents' lateness history kept as a small JSON file in the state directory, so a restarted
 * gateway keeps each agent's learned grace (written whole, through a temporary file).
 */
import { dirname } from "node:path";
import type { LatenessHistory, LatenessStore } from "./lateness.ts";

export const LATENESS_FILE = "lateness.json";

/** A store at `path`: a missing or unreadable file is an empty history. */
export function latenessFile(path: string): LatenessStore {
  return {
    load(): LatenessHistory {
      try {
        return JSON.parse(Deno.readTextFileSync(path));
      } catch {
        return {};
      }
    },
    save(history: LatenessHistory): void {
      Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = `${path}.${Deno.pid}.tmp`;
      Deno.writeTextFileSync(temporary, JSON.stringify(history), { mode: 0o600 });
      Deno.renameSync(temporary, path);
    },
  };
}
