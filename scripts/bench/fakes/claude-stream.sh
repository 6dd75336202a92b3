#!/usr/bin/env bash
# Bench fake in Claude Code's `--output-format stream-json --include-partial-messages` shape:
# init, message_start, one text_delta line per token, the assistant message and the result.
# Arguments are ignored. The synthesizer streams timestamped tokens like stream.sh
# (BENCH_TOKENS, BENCH_TOKEN_GAP); children answer at once.
LC_ALL=C
prompt=$(cat)
sid=00000000-bench-4000-8000-000000000000
head='"parent_tool_use_id":null,"session_id":"'$sid'"'
printf '{"type":"system","subtype":"init","cwd":"%s","session_id":"%s","tools":[],"model":"bench","permissionMode":"bypassPermissions"}\n' "$PWD" "$sid"
printf '{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[],"usage":{"input_tokens":%d,"output_tokens":1}}},%s}\n' "$((${#prompt} / 4))" "$head"
printf '{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},%s}\n' "$head"
delta() {
  printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}},%s}\n' "$1" "$head"
}
case $prompt in
*BENCH-CANDIDATE*)
  text=
  for ((i = 0; i < ${BENCH_TOKENS:-100}; i++)); do
    token="t$i@${EPOCHREALTIME//[!0-9]/} "
    delta "$token"
    text+=$token
    sleep "${BENCH_TOKEN_GAP:-0.01}"
  done
  ;;
*)
  text='BENCH-CANDIDATE'
  delta "$text"
  ;;
esac
printf '{"type":"stream_event","event":{"type":"content_block_stop","index":0},%s}\n' "$head"
printf '{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":%d}},%s}\n' "$((${#text} / 4 + 1))" "$head"
printf '{"type":"stream_event","event":{"type":"message_stop"},%s}\n' "$head"
printf '{"type":"assistant","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{"type":"text","text":"%s"}]},%s}\n' "$text" "$head"
printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":0,"num_turns":1,"result":"%s","total_cost_usd":0,"usage":{"input_tokens":%d,"output_tokens":%d},%s}\n' "$text" "$((${#prompt} / 4))" "$((${#text} / 4 + 1))" "$head"
