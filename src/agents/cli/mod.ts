/**
 * The agent CLIs: one adapter per CLI (argv and output parser), and the run of one CLI child
 * from spawn to its result.
 */
export {};
