/**
 * A small `sh` per gateway that ends the gateway's process groups when the gateway dies, by any
 * signal, SIGKILL included: it reads "+ pgid" and "- pgid" lines from a pipe only the gateway
 * holds, and when the pipe reaches end of file it sends SIGTERM to every group still listed,
 * then SIGKILL to those left after a grace. It leads its own session, so a terminal's ^C or
 * hang-up does not reach it, and ignores the catchable signals.
 */
import { type GroupSpawn, spawnPlan } from "./group_spawn.ts";

/** Positional parameters: $1 the grace in tenths of a second. */
const SCRIPT = `
trap '' INT HUP TERM QUIT PIPE
groups=' '
while read -r op pgid; do
  case $op in
    +) groups="$groups$pgid " ;;
    -) case $groups in *" $pgid "*) groups="\${groups%% $pgid *} \${groups#* $pgid }" ;; esac ;;
  esac
done
set -- "$1" $groups
tenths=$1
shift
[ $# -eq 0 ] && exit 0
for g do kill -s TERM -- "-$g" 2>/dev/null; done
n=0
while [ "$n" -lt "$tenths" ]; do
  alive=
  for g do kill -s CONT -- "-$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && exit 0
  sleep 0.1 2>/dev/null || { sleep 1; n=$((n + 9)); }
  n=$((n + 1))
done
for g do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
`;

interface WatchdogOptions {
  groupSpawn: GroupSpawn;
  /** Between the SIGTERM and the SIGKILL of the groups once the gateway is gone. */
  graceMs: number;
  /** The watchdog exited while the gateway still runs (killed by someone). */
  onExit?: (status: Deno.CommandStatus) => void;
}

/** One running watchdog. */
export class Watchdog {
  #closing = false;

  private constructor(
    readonly pid: number,
    readonly child: Deno.ChildProcess,
    readonly writer: WritableStreamDefaultWriter<Uint8Array>,
  ) {}

  /** Starts a watchdog that already lists `groups`. Throws when it cannot be spawned. */
  static start(options: WatchdogOptions, groups: Iterable<number> = []): Watchdog {
    const tenths = String(Math.max(1, Math.ceil(options.graceMs / 100)));
    const plan = spawnPlan({
      command: "/bin/sh",
      args: ["-c", SCRIPT, "council-gateway-watchdog", tenths],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
    }, options.groupSpawn);
    const child = new Deno.Command(plan.program, {
      args: plan.args,
      cwd: "/",
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      detached: plan.detached,
    }).spawn();
    const watchdog = new Watchdog(child.pid, child, child.stdin.getWriter());
    child.status.then((status) => {
      if (!watchdog.#closing) options.onExit?.(status);
    });
    for (const pgid of groups) watchdog.add(pgid);
    return watchdog;
  }

  #send(line: string): void {
    if (this.#closing) return;
    // A failed write means the watchdog is gone; its exit is reported through `onExit`.
    this.writer.write(new TextEncoder().encode(line)).catch(() => {});
  }

  add(pgid: number): void {
    this.#send(`+ ${pgid}\n`);
  }

  remove(pgid: number): void {
    this.#send(`- ${pgid}\n`);
  }

  /** Closes the pipe (the watchdog ends what is still listed, normally nothing) and waits. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.writer.close().catch(() => {});
    await this.child.status;
  }
}
