/**
 * The gateway as a background process: starting and stopping it, where it keeps its files, and
 * asking a running gateway over HTTP.
 */
export {};
