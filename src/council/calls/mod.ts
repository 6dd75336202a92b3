/**
 * The agent calls of a turn: each call metered and cut off when needed, the children run until
 * the quorum, their workspaces, agent health and the early synthesizer.
 */
export {};
