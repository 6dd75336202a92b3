/**
 * Running one agent for the council, a CLI child or an HTTP API call, into agent events and one
 * result, with the warm pool, prices and context budgets.
 */
export {};
