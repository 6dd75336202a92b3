/** Claude Code's status line: the council's live state, read from a running gateway, as one line. */
export {};
