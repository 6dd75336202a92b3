/**
 * The wire protocols the hosts speak (Anthropic Messages and OpenAI Responses), parsed into the
 * council's neutral turn input and rendered back from its turn events.
 */
export {};
