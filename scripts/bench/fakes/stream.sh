#!/usr/bin/env bash
# Bench fake for the `command` runner whose synthesizer streams timestamped tokens: token i is
# `t<i>@<epoch microseconds> `, written the moment the stamp is taken, one every
# BENCH_TOKEN_GAP seconds (default 0.01), BENCH_TOKENS of them (default 100). Children answer
# at once. bash (not sh) for $EPOCHREALTIME: a clock read without a fork.
LC_ALL=C
prompt=$(cat)
case $prompt in
*BENCH-CANDIDATE*)
  for ((i = 0; i < ${BENCH_TOKENS:-100}; i++)); do
    printf 't%d@%s ' "$i" "${EPOCHREALTIME//[!0-9]/}"
    sleep "${BENCH_TOKEN_GAP:-0.01}"
  done
  printf '\n'
  ;;
*) printf 'BENCH-CANDIDATE\n' ;;
esac
