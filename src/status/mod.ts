/**
 * The gateway's live status: a store fed by the council's observer, the status document and its
 * routes, and the dashboard.
 */
export {};
