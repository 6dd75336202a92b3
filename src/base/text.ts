/** Text made fit for one line of a log, an error or a progress note. */

/** Collapses whitespace (line breaks included) to single spaces and cuts to `max` characters. */
export function oneLine(text: string, max = Infinity): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `1 isolated workspace`, `3 isolated workspaces`: a count with its noun in the right number. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
