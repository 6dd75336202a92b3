/** The command line's help texts: the overview and one page per command. */
import { VERSION } from "../base/version.ts";

export const PROGRAM = "council-gateway";

const COMMON_HELP = `  --config FILE   configuration file (default: $SVC_CONFIG, ./council.yaml,
                  $XDG_CONFIG_HOME/council-gateway/config.yaml)
  --host HOST     bind host (overrides SVC_GATEWAY_HOST and the file)
  --port PORT     bind port, 0 for an ephemeral one (overrides SVC_GATEWAY_PORT)
  -h, --help      show this help`;

const STATE = "$XDG_STATE_HOME/council-gateway (default ~/.local/state/council-gateway)";

export const HELP: Record<string, string> = {
  main: `${PROGRAM} ${VERSION} — a local model endpoint that answers every prompt with a council
of coding agents (claude, codex, gemini, …).

Usage:
  ${PROGRAM} [serve] [--config FILE] [--host H] [--port P]   run the gateway (default)
  ${PROGRAM} start | stop | restart | status   the gateway in the background
  ${PROGRAM} logs [-f] [-n N]          the background gateway's log
  ${PROGRAM} claude|codex [args…]      run that host against the gateway (started if need be)
  ${PROGRAM} doctor  [--config FILE]   check config, agent CLIs and the bind address
  ${PROGRAM} connect claude|codex      print how to point that host at this gateway
  ${PROGRAM} statusline                Claude Code's status line command: the live council
  ${PROGRAM} init    [--config FILE]   write a commented starter configuration
  ${PROGRAM} config  [--config FILE]   print the effective configuration (secrets masked)
  ${PROGRAM} usage   [--ledger FILE] [--json]   spend per day, session and agent
  ${PROGRAM} usage --agents [--window W]  what each member does for the council
  ${PROGRAM} eval SUITE [--arm A]…     does the council beat its best member on these tasks?
  ${PROGRAM} keys create|list|revoke   per-person keys (needs \`database\`)
  ${PROGRAM} version                   print the version

The dashboard: open http://HOST:PORT/ in a browser while the gateway runs.
Run '${PROGRAM} <command> --help' for a command's options.
Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error (status: 3 not running).
`,
  serve: `Usage: ${PROGRAM} [serve] [options]

Runs the gateway on http://HOST:PORT (default 127.0.0.1:6767) serving /v1/messages,
/v1/responses, /v1/messages/count_tokens and /v1/models, the dashboard at /, /health and the
status API (/v1/council/status), until SIGINT or SIGTERM (a second one cancels running turns).
The configuration file is reloaded when it changes and on SIGHUP.

Options:
${COMMON_HELP}
`,
  start: `Usage: ${PROGRAM} start [options]

Starts the gateway in the background and returns once it listens. Its PID file and log file
are in ${STATE}.

Options:
${COMMON_HELP}
`,
  stop: `Usage: ${PROGRAM} stop

Stops the background gateway (SIGTERM: running turns get the usual grace, then are cancelled).
`,
  restart: `Usage: ${PROGRAM} restart [options]

Stops the background gateway, then starts it again with these options.

Options:
${COMMON_HELP}
`,
  status: `Usage: ${PROGRAM} status [--config FILE]

Says whether a gateway runs (the background one, or one on the configured port), with its
configuration file, uptime, spend and live turns. Exits 0 when it runs, 3 when not.
`,
  logs: `Usage: ${PROGRAM} logs [-f] [-n N]

Prints the background gateway's log (${STATE}/gateway.log).

Options:
  -f, --follow    keep printing what is appended (Ctrl-C ends)
  -n, --lines N   the last N lines first (default 100; 0 for the whole log)
  -h, --help      show this help
`,
  claude: `Usage: ${PROGRAM} [--config FILE] claude [claude's arguments…]

Starts the gateway in the background unless one runs, then runs Claude Code in this terminal
with the environment \`connect claude\` prints and the council status line (unless you pass
--settings yourself). Every argument after \`claude\` is Claude Code's.
`,
  codex: `Usage: ${PROGRAM} [--config FILE] codex [codex's arguments…]

Starts the gateway in the background unless one runs, then runs Codex in this terminal with
the gateway as its model provider (as \`connect codex\` prints). Every argument after \`codex\`
is Codex's.
`,
  doctor: `Usage: ${PROGRAM} doctor [options]

Checks the configuration file, each agent's CLI (found on PATH? its --version) and whether
the bind address is free (or held by a running council gateway). Exits 1 when something is
wrong.

Options:
${COMMON_HELP}
`,
  connect: `Usage: ${PROGRAM} connect claude|codex [options]

claude: prints shell exports for Claude Code (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, …),
        and, as comments, the settings.json lines of the council status line:
          eval "$(${PROGRAM} connect claude)"
          --settings   print only that settings.json snippet
codex:  prints a config.toml provider block and the export of its token variable.
          --toml   print only the config.toml lines
          --env    print only the shell export

Options:
${COMMON_HELP}
`,
  statusline: `Usage: ${PROGRAM} statusline [--config FILE]

Claude Code's statusLine command: reads the session JSON Claude Code writes on stdin and prints
one line with that session's live council, e.g.
  council · claude ✓ 8s · codex … 11s · gemini ✗ · $0.04
Set it up with \`${PROGRAM} connect claude --settings\`.
`,
  init: `Usage: ${PROGRAM} init [--config FILE] [--force] [--stdout]

Writes a commented starter configuration whose council is the agent CLIs found on PATH
(default: $XDG_CONFIG_HOME/council-gateway/config.yaml).

Options:
  --config FILE   where to write it
  --force         replace an existing file
  --stdout        print it instead of writing it
  -h, --help      show this help
`,
  config: `Usage: ${PROGRAM} config [options]

Prints the effective configuration (defaults < file < SVC_* env < flags) as YAML, with the
token and secret-looking agent env values masked.

Options:
${COMMON_HELP}
`,
  usage: `Usage: ${PROGRAM} usage [--ledger FILE] [--config FILE] [--json]
       ${PROGRAM} usage --agents [--window today|7d|all] [--ledger FILE] [--json]

Summarises the turn ledger (config \`ledger\`, one JSON line per finished turn): totals, then
spend per day (UTC), per session and per agent. With --agents: each member's seat instead —
turns sat, proposals (valid), chosen and what became of it (ok, error, rejected by the user),
agreed with the chosen call, failed, spend, median latency — and one sentence per member.
Exits 1 when the ledger cannot be read.

Options:
  --ledger FILE   the ledger to read (default: the configuration's \`ledger\`)
  --config FILE   configuration file whose \`ledger\` is used (lookup as for serve)
  --agents        each member's seat (see above)
  --window W      with --agents: today (UTC), 7d or all (default all)
  --json          print the summary as JSON instead of tables
  -h, --help      show this help
`,
  eval: `Usage: ${PROGRAM} eval SUITE [options]

Runs each task of SUITE (a task directory, or a directory of them: task.yaml with prompt,
setup, check, timeoutSec, and workspace/) with each arm: a fresh copy of the workspace, a
gateway of its own with the arm's configuration, the host headless in the copy, then the check.
Each finished run is appended to OUT/results.jsonl at once; rerunning resumes. Prints the report
(also written as OUT/report.md and OUT/report.html): pass rate with a 95 % Wilson interval, $ per
solved task, median wall, the council against the best single arm (exact McNemar p), a verdict.

Options:
  --arm ARM           council | solo:AGENT | best-of:AGENT:N | NAME=FILE (repeatable;
                      default: council and each agent alone)
  --runs K            runs per task and arm (default 1)
  --concurrency N     runs at once (default 1)
  --max-usd X         start no run once the recorded spend reaches X dollars
  --host claude|codex the host to run (default claude: claude -p; codex: codex exec)
  --host-command PATH the host's executable (default: found on PATH)
  --out DIR           results, logs and reports (default ./eval-out)
  --json              print the report as JSON
  --config FILE       the configuration the arms start from
  -h, --help          show this help
`,
  keys: `Usage: ${PROGRAM} keys create --name NAME --max-usd DOLLARS [--period day|week|month|none]
       ${PROGRAM} keys list [--json]
       ${PROGRAM} keys revoke NAME|ID

Per-person API keys in the configured database (\`database\` or SVC_DATABASE_URL). A request
presenting a key (Authorization: Bearer or x-api-key) is charged to it; a key over its budget
gets 429 until its period (UTC) resets. \`create\` prints the key once: only its SHA-256 is
stored. SVC_GATEWAY_TOKEN stays the admin key.

Options:
  --name NAME       who the key is for
  --max-usd N       the budget per period, in dollars
  --period P        day, week (from Monday), month (default) or none
  --config FILE     configuration file whose \`database\` is used
  --json            list: as JSON
  -h, --help        show this help
`,
  version: `Usage: ${PROGRAM} version

Prints the version.
`,
};
