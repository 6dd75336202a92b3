/** Argv helpers the adapters share. */

/** Whether args already carry one of the flags (`--flag value` or `--flag=value`). */
export function hasFlag(args: readonly string[], flags: readonly string[]): boolean {
  return args.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
}
