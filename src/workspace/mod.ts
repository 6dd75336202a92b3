/**
 * Isolated workspaces for a fanned-out turn's writing children: copies of the real working
 * directory, their changes read back, and the chosen changes applied.
 */
export {};
