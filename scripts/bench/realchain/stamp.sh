#!/usr/bin/env bash
# Real-chain bench wrapper, configured as an agent's `command`: appends when the real CLI
# ($REALCHAIN_EXEC) starts and exits to $REALCHAIN_STAMPS, as
# "<tag> <pid> start <epoch s>" and "<tag> <pid> exit <epoch s> <status>".
# Not `exec`: the exit stamp needs this shell alive; it costs one bash start per child, which
# the bench measures separately and reports.
printf '%s %s start %s\n' "$REALCHAIN_TAG" "$$" "$EPOCHREALTIME" >>"$REALCHAIN_STAMPS"
"$REALCHAIN_EXEC" "$@"
status=$?
printf '%s %s exit %s %s\n' "$REALCHAIN_TAG" "$$" "$EPOCHREALTIME" "$status" >>"$REALCHAIN_STAMPS"
exit "$status"
