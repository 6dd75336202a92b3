/**
 * The HTTP agents: one adapter per model API (Anthropic Messages, OpenAI-compatible chat), the
 * streaming transport and the run of one call.
 */
export {};
