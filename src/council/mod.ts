/**
 * The council: one turn of a conversation answered by several agents, from the neutral turn
 * request to its events, knowing nothing of HTTP or of how an agent runs.
 */
export {};
