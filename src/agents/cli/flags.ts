/** Argv helpers the adapters share. */

/** Whether args already carry one of the flags (`--flag value` or `--flag=value`). */
export function hasFlag(args: readonly string[], flags: readonly string[]): boolean {
  return args.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
}

/** A flag to remove: its name, and whether a separate value follows it (`--flag value`). */
export interface FlagSpec {
  flag: string;
  takesValue: boolean;
}

/**
 * Args without the given flags (`--flag`, `--flag=value`, and `--flag value` when the flag
 * takes a value), so a mode the council sets cannot be undone or doubled by an agent's args.
 */
export function withoutFlags(args: readonly string[], flags: readonly FlagSpec[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (flags.some(({ flag }) => arg.startsWith(`${flag}=`))) continue;
    const spec = flags.find(({ flag }) => arg === flag);
    if (!spec) out.push(arg);
    else if (spec.takesValue) i++;
  }
  return out;
}
