/**
 * Which of a failed child's last stderr lines says why it failed: CLIs often end with advice
 * ("Update your environment and try again") after the line that names the problem.
 */

/** Words of a line that names a problem rather than giving advice or noise. */
const PROBLEM =
  /\b(errors?|fatal|failed|must|invalid|missing|not (?:found|set|logged in|allowed)|no such|denied|unauthori[sz]ed|forbidden|cannot|can't|could not|unable|refused|expired|quota|exceeded)\b/i;
/** A stack frame (`    at f (file.js:1:2)`) names where, not what. */
const STACK_FRAME = /^\s*at\s/;

/** The last line that names a problem, else the last line (undefined when there is none). */
export function tellingStderrLine(tail: readonly string[]): string | undefined {
  for (let i = tail.length - 1; i >= 0; i--) {
    if (!STACK_FRAME.test(tail[i]) && PROBLEM.test(tail[i])) return tail[i];
  }
  return tail.at(-1);
}
