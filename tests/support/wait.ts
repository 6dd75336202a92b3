/**
 * Waiting in tests without fixed sleeps: a bound on a promise, and polling until a check holds.
 * Each bound is a safety net against a hang, not a timing assertion.
 */

/** Awaits `promise`, failing after `ms` with what was being waited for. */
export async function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `check` every `everyMs` until it gives something other than `undefined` or `false`, and
 * returns that; fails after `ms` with what was being waited for.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  what: string,
  ms = 10_000,
  everyMs = 25,
): Promise<Exclude<T, undefined | false>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
