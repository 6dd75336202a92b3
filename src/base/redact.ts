/**
 * The one redaction: the registry of values that no log line, progress line, answer or error
 * reply may show, and the functions every one of those outputs masks them with.
 */

/** What a secret is replaced by. */
const MASK = "***";

/** Secrets shorter than this are not masked: they would mangle ordinary words. */
export const MIN_SECRET_LENGTH = 4;

/** Secrets learnt at run time and no longer in use that are still masked (oldest forgotten). */
const RECENT_CAPACITY = 64;

/** The forms a secret may appear in: raw, and escaped inside a JSON string (JSON log lines). */
function needlesOf(secrets: Iterable<string>): string[] {
  const needles = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    needles.add(secret);
    needles.add(JSON.stringify(secret).slice(1, -1));
  }
  // Longest first: at one position the longest secret wins, so one containing another is whole.
  return [...needles].sort((a, b) => b.length - a.length);
}

/** One pattern matching every needle, longest first at each position; undefined when none. */
function patternOf(needles: readonly string[]): RegExp | undefined {
  return needles.length ? new RegExp(needles.map(RegExp.escape).join("|"), "g") : undefined;
}

/** Returns a function that masks every occurrence of the given secrets (raw or JSON-escaped). */
export function createRedactor(secrets: Iterable<string>): (text: string) => string {
  const pattern = patternOf(needlesOf(secrets));
  if (!pattern) return (text) => text;
  return (text) => text.replace(pattern, MASK);
}

/**
 * Secrets by lifetime: fixed ones (the gateway token, provider keys in the environment) for the
 * process's life; held ones (a provider key a running turn forwards) at least until released;
 * learnt ones while there is room among the recent, never while held.
 */
export class SecretRegistry {
  #fixed = new Set<string>();
  #held = new Map<string, number>();
  #recent = new Map<string, true>();
  #version = 0;
  #compiled: { version: number; needles: string[]; pattern: RegExp | undefined } | undefined;

  /** Masks `secret` for the life of the process. */
  add(secret: string | undefined): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.#fixed.has(secret)) return;
    this.#fixed.add(secret);
    this.#recent.delete(secret);
    this.#version++;
  }

  /** Masks `secret` from now on, for as long as room among the recent allows (or it is held). */
  learn(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.#fixed.has(secret)) return;
    if (this.#held.has(secret)) return;
    const known = this.#recent.delete(secret);
    this.#recent.set(secret, true);
    if (!known) this.#version++;
    this.#trim();
  }

  /**
   * Masks each secret at least until the returned function is called (once); then each is kept
   * as recently learnt. Holds nest: a secret stays held while any holder has not released it.
   */
  hold(secrets: Iterable<string>): () => void {
    const taken = [...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH && !this.#fixed.has(s));
    for (const secret of taken) {
      const count = this.#held.get(secret) ?? 0;
      this.#held.set(secret, count + 1);
      if (count === 0 && !this.#recent.delete(secret)) this.#version++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const secret of taken) {
        const count = this.#held.get(secret) ?? 1;
        if (count > 1) {
          this.#held.set(secret, count - 1);
          continue;
        }
        this.#held.delete(secret);
        this.#recent.set(secret, true);
      }
      this.#trim();
    };
  }

  /** Every secret currently masked. */
  values(): string[] {
    return [...this.#fixed, ...this.#held.keys(), ...this.#recent.keys()];
  }

  /** Whether `text` contains a masked secret. */
  contains(text: string): boolean {
    return this.#current().needles.some((needle) => text.includes(needle));
  }

  /** `text` with every secret masked. */
  redact(text: string): string {
    const { pattern } = this.#current();
    return pattern ? text.replace(pattern, MASK) : text;
  }

  /** Where secrets occur in `text`: [start, end) spans, in order, as `redact` masks them. */
  spans(text: string): [number, number][] {
    const { pattern } = this.#current();
    if (!pattern) return [];
    return [...text.matchAll(pattern)].map((m) => [m.index, m.index + m[0].length]);
  }

  /** A redactor for text that arrives in pieces (a streamed answer); see StreamRedactor. */
  stream(): StreamRedactor {
    return new StreamRedactor(this);
  }

  /** The secrets' masked forms, longest first. */
  needles(): readonly string[] {
    return this.#current().needles;
  }

  #current() {
    if (this.#compiled?.version !== this.#version) {
      const needles = needlesOf(this.values());
      this.#compiled = { version: this.#version, needles, pattern: patternOf(needles) };
    }
    return this.#compiled;
  }

  #trim(): void {
    while (this.#recent.size > RECENT_CAPACITY) {
      const oldest = this.#recent.keys().next().value as string;
      this.#recent.delete(oldest);
      this.#version++;
    }
  }
}

/**
 * Masks secrets in text that arrives in pieces: a secret split across pieces is still masked,
 * because the end of what has arrived is held back while it could be the start of a secret.
 */
class StreamRedactor {
  #registry: SecretRegistry;
  #pending = "";

  constructor(registry: SecretRegistry) {
    this.#registry = registry;
  }

  /** The text that can safely go out now (possibly empty). */
  push(piece: string): string {
    const text = this.#pending + piece;
    // Cut before any end that could be the start of a secret, and never inside a whole one.
    let cut = text.length - partialSecretAtEnd(text, this.#registry.needles());
    for (const [start, end] of this.#registry.spans(text)) {
      if (start < cut && end > cut) cut = start;
    }
    this.#pending = text.slice(cut);
    return this.#registry.redact(text.slice(0, cut));
  }

  /** Whatever was held back, once no more text will come. */
  flush(): string {
    const rest = this.#registry.redact(this.#pending);
    this.#pending = "";
    return rest;
  }
}

/** The length of the longest end of `text` that is the start (not the whole) of a needle. */
function partialSecretAtEnd(text: string, needles: readonly string[]): number {
  let longest = 0;
  for (const needle of needles) {
    // Starts further back than the longest found so far; the first match is this needle's longest.
    const from = Math.max(0, text.length - needle.length + 1);
    for (let p = from; p < text.length - longest; p++) {
      if (text[p] === needle[0] && needle.startsWith(text.slice(p))) {
        longest = text.length - p;
        break;
      }
    }
  }
  return longest;
}

/** The process's registry: what the log, progress, answers and error replies all mask. */
export const secrets = new SecretRegistry();

/** `text` with every secret the process knows masked. */
export function redact(text: string): string {
  return secrets.redact(text);
}
