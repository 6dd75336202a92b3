#!/usr/bin/env bash
# Real-chain bench wrapper, configured as an agent's `command`: appends when the real CLI
# ($REALCHAIN_EXEC) starts and exits to $REALCHAIN_STAMPS, as
# "<tag> <pid> start <epoch s>" and "<tag> <pid> exit <epoch s> <status>".
# Not `exec`: the exit stamp needs this shell alive; it costs one bash start per child, which
# the bench measures separately and reports. Every request the CLI sends carries this shell's pid
# (x-realchain-pid), so the stub's records name the process that made them: claude and gemini
# through their custom-header variables, codex through its provider's env_http_headers.
export REALCHAIN_PID=$$
export ANTHROPIC_CUSTOM_HEADERS="${ANTHROPIC_CUSTOM_HEADERS:+$ANTHROPIC_CUSTOM_HEADERS
}x-realchain-pid: $$"
export GEMINI_CLI_CUSTOM_HEADERS="${GEMINI_CLI_CUSTOM_HEADERS:+$GEMINI_CLI_CUSTOM_HEADERS, }x-realchain-pid: $$"
# The gateway ends a CLI's process group once the CLI has answered: a no-op trap keeps this shell
# alive through that SIGTERM (the CLI, exec'd with default handlers, still gets it) to stamp the exit.
trap ':' TERM
printf '%s %s start %s\n' "$REALCHAIN_TAG" "$$" "$EPOCHREALTIME" >>"$REALCHAIN_STAMPS"
"$REALCHAIN_EXEC" "$@"
status=$?
printf '%s %s exit %s %s\n' "$REALCHAIN_TAG" "$$" "$EPOCHREALTIME" "$status" >>"$REALCHAIN_STAMPS"
exit "$status"
