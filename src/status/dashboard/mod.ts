/**
 * The status dashboard page: its markup, script and stylesheet, served from memory with a strict
 * content security policy.
 */
export {};
