/**
 * Action turns: the children's structured proposals, their tally and the synthesizer's choice of
 * one.
 */
export {};
