/**
 * `serve`: the gateway in the foreground until SIGINT or SIGTERM, with its configuration
 * reloaded when the file changes and on SIGHUP (a SIGHUP because the terminal went away shuts it
 * down instead), and a warning for each configured agent command that is not installed.
 */
import { bindPolicyProblem } from "../config/bind_policy.ts";
import { type Config, ConfigError } from "../config/mod.ts";
import { missingCommands } from "../agents/cli/runners.ts";
import {
  collectSecrets,
  type Logger,
  moduleLogger,
  setupLogging,
  writeStdout,
} from "../base/log.ts";
import { ConfigReloader } from "../config/reload.ts";
import { apiKeyVariables } from "../base/secret_variables.ts";
import { startServer } from "../server/wiring.ts";
import { StoreError } from "../store/open_store.ts";
import { urlPassword } from "../store/url.ts";
import { startTeam, type Team } from "../store/team.ts";

type Env = (name: string) => string | undefined;

/** A terminal that hung up cannot be opened any more; one that is still there can. */
function terminalGone(): boolean {
  try {
    Deno.openSync("/dev/tty", { read: true }).close();
    return false;
  } catch {
    return true;
  }
}

function setupServeLogging(config: Readonly<Config>, env: Env): void {
  setupLogging({
    level: config.logLevel,
    json: config.logJson,
    secrets: [
      ...collectSecrets(
        config.token,
        env,
        apiKeyVariables([...config.defaultAgents, config.judge]),
      ),
      ...urlPassword(config.database),
    ],
    write: (line) => {
      try {
        writeStdout(line);
      } catch {
        // The terminal is gone (EIO): nowhere to write, and no reason to stop serving.
      }
    },
  });
}

function warnMissingCommands(config: Readonly<Config>, env: Env, log: Logger): void {
  for (const missing of missingCommands(config, env)) {
    log.warn(
      "agent {agent}: command {command} not found; its calls will fail until it is installed " +
        "(council-gateway doctor)",
      { agent: missing.agent, command: missing.command },
    );
  }
}

/** With `database` set: the store connected and migrated; one line and exit 2 when it cannot be. */
async function joinTeam(config: Readonly<Config>): Promise<Team | undefined> {
  if (!config.database) return undefined;
  try {
    return await startTeam({
      url: config.database,
      log: moduleLogger("store"),
      heartbeatMs: config.databaseHeartbeatMs,
    });
  } catch (err) {
    if (err instanceof StoreError) throw new ConfigError(`database: ${err.message}`);
    throw err;
  }
}

export async function serveCommand(
  load: () => Readonly<Config>,
  env: Env,
): Promise<number> {
  const config = load();
  const problem = bindPolicyProblem(config);
  if (problem) throw new ConfigError(problem);
  setupServeLogging(config, env);
  const log = moduleLogger("server");
  // Listening before the server starts: without a listener a SIGHUP would end the process.
  let onHangup = () => {};
  const hangup = () => onHangup();
  const posix = Deno.build.os !== "windows";
  if (posix) Deno.addSignalListener("SIGHUP", hangup);
  let reloader: ConfigReloader | undefined;
  const team = await joinTeam(config);
  try {
    const server = startServer(config, { handleSignals: true, team });
    warnMissingCommands(config, env, log);
    reloader = new ConfigReloader({
      load,
      current: config,
      log: moduleLogger("config"),
      apply: (next) => {
        server.reload(next);
        // The level, the token or an agent's key variable may have changed.
        setupServeLogging(next, env);
        warnMissingCommands(next, env, log);
      },
    });
    reloader.watch();
    // Started in a terminal, even with its output sent to a file (`> gateway.log`, `| tee`): a
    // hangup then means that terminal closed. Not so under nohup or `start` (no terminal).
    const wasTerminal = [Deno.stdin, Deno.stdout, Deno.stderr].some((io) => io.isTerminal());
    const reloading = reloader;
    onHangup = () => {
      if (wasTerminal && terminalGone()) void server.shutdown();
      else reloading.reload("SIGHUP");
    };
    await server.finished;
  } finally {
    reloader?.stop();
    await team?.close();
    if (posix) Deno.removeSignalListener("SIGHUP", hangup);
  }
  return 0;
}
