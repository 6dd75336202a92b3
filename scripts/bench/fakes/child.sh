#!/bin/sh
# Bench fake for the `command` runner: reads the prompt, sleeps, prints one plain-text reply.
# The synthesizer is told apart by the candidates' marker in its prompt, so one script serves
# every agent. Knobs (seconds, "0" = no sleep): BENCH_CHILD_SLEEP, BENCH_SYNTH_SLEEP.
# Kept to the cheapest shell work (one `cat`, one `sleep`) so the gateway is what is measured.
prompt=$(cat)
case $prompt in
*BENCH-CANDIDATE*)
  [ "${BENCH_SYNTH_SLEEP:-0}" = 0 ] || sleep "$BENCH_SYNTH_SLEEP"
  printf 'BENCH-ANSWER\n'
  ;;
*)
  [ "${BENCH_CHILD_SLEEP:-0}" = 0 ] || sleep "$BENCH_CHILD_SLEEP"
  printf 'BENCH-CANDIDATE\n'
  ;;
esac
