/**
 * Where the background gateway keeps its files: `$XDG_STATE_HOME/council-gateway` (default
 * `~/.local/state/council-gateway`) holds the PID file, the log file and what the running
 * gateway told its starter (origin, configuration file).
 */
import { join } from "node:path";

type Env = (name: string) => string | undefined;

export interface DaemonPaths {
  dir: string;
  pid: string;
  log: string;
  state: string;
}

function stateDir(env: Env): string {
  const xdg = env("XDG_STATE_HOME");
  if (xdg) return join(xdg, "council-gateway");
  const home = env("HOME") || env("USERPROFILE");
  if (!home) throw new Error("neither XDG_STATE_HOME nor HOME is set: no place for the PID file");
  return join(home, ".local", "state", "council-gateway");
}

export function daemonPaths(env: Env): DaemonPaths {
  const dir = stateDir(env);
  return {
    dir,
    pid: join(dir, "gateway.pid"),
    log: join(dir, "gateway.log"),
    state: join(dir, "gateway.json"),
  };
}
