/**
 * The Anthropic Messages protocol (`POST /v1/messages`): its request body, hints, JSON reply and
 * SSE stream.
 */
export {};
