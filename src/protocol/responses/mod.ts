/**
 * The OpenAI Responses protocol (`POST /v1/responses`): its request body, hints, JSON reply and
 * SSE stream.
 */
export {};
