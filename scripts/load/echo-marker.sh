#!/bin/sh
# Load fake for the `command` runner: waits a known time, then replies with every load marker
# (LOAD-MARK-<a-z0-9>) found in its prompt, so an answer shows which turns it heard of. The
# synthesizer is told apart by the candidates' header in its prompt. Knobs, in seconds ("0" =
# no wait): LOAD_CHILD_SLEEP, LOAD_SYNTH_SLEEP. Plain sh, no helper processes but `sleep`.
prompt=$(cat)
marks=
rest=$prompt
while :; do
  case $rest in
  *LOAD-MARK-*) ;;
  *) break ;;
  esac
  rest=${rest#*LOAD-MARK-}
  marks="$marks LOAD-MARK-${rest%%[!0-9a-z]*}"
done
case $prompt in
*"=== Candidate A ==="*)
  role=answer
  pause=${LOAD_SYNTH_SLEEP:-0}
  ;;
*)
  role=candidate
  pause=${LOAD_CHILD_SLEEP:-0}
  ;;
esac
[ "$pause" = 0 ] || sleep "$pause"
printf '%s:%s\n' "$role" "$marks"
