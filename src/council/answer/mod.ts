/**
 * Answer turns: the answer channel, a lone child's live answer or a synthesis of the children's
 * candidates, and the choice among their file changes.
 */
export {};
