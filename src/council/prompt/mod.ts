/**
 * The prompts the council sends to agents, composed from the conversation and fitted to each
 * agent's budget.
 */
export {};
