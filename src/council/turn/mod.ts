/**
 * One council turn as a unit: admission, the planning step, the answer or action step, progress
 * narration and the single `done`.
 */
export {};
