/** Which of the fake vendor's recorded calls are a synthesizer's: its prompt's section titles. */
import type { RecordedRequest } from "../../../tests/support/fake_vendor/mod.ts";

const SYNTH_MARKS = ["Candidate replies", "Proposed next steps"];

/** Whether the call is a synthesizer's (it reads the candidates or the proposed steps). */
export function isSynthesis(request: RecordedRequest): boolean {
  return SYNTH_MARKS.some((mark) => request.prompt.includes(mark));
}
