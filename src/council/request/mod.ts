/**
 * The turn request derived from protocol-free input: the working directory, the user's actual
 * ask, and whether it is housekeeping.
 */
export {};
