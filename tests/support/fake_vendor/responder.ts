/**
 * The fake vendor's answering: for each recorded request, the scripted answer (or the default),
 * checked as the real API checks it, paced by its latency profile with a seeded draw per caller
 * and model, with prompt-cache reads and writes per credential and model.
 */
import { failureResponse, housekeepingResponse, modelResponse } from "./answer.ts";
import {
  fillerAnswer,
  INSTANT,
  type LatencyProfile,
  type PaceClock,
  seededRandom,
} from "./latency.ts";
import {
  anthropicBlocks,
  AutomaticCache,
  type CacheReading,
  ExplicitCache,
} from "./prompt_cache.ts";
import { cacheKeyOf, invalidOf, isModelCall, type RecordedRequest } from "./request.ts";
import { type Answer, partsOf, type Rule, Script } from "./script.ts";

export interface FakeVendorOptions {
  /** The clock replies are paced on (default: real time). */
  clock?: PaceClock;
  /** Seeds the latency jitter (default 1). */
  seed?: number;
  /** The latency profile for requests no other profile covers (default: instant). */
  profile?: LatencyProfile;
  /** Latency profiles by caller (the caller header) or, failing that, by model. */
  profiles?: Record<string, LatencyProfile>;
  /**
   * The answer when no rule matches; undefined (or a function returning it) gives a filler text
   * of the latency profile's answer length.
   */
  answer?: Answer | ((request: RecordedRequest) => Answer | undefined);
  rules?: Rule[];
}

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Answers recorded requests by the script, the profiles and the caches. */
export class Responder {
  readonly script = new Script();
  #explicit = new ExplicitCache();
  #automatic = new AutomaticCache();
  #draws = new Map<string, number>();
  #seed: number;

  constructor(readonly options: FakeVendorOptions, readonly clock: PaceClock) {
    for (const rule of options.rules ?? []) this.script.add(rule);
    this.#seed = options.seed ?? 1;
  }

  /** Starts the draws afresh from `seed`: the requests that follow get the same latencies again. */
  reseed(seed: number): void {
    this.#seed = seed;
    this.#draws.clear();
  }

  async reply(request: RecordedRequest): Promise<Response> {
    const answer = this.script.answer(request) ??
      (isModelCall(request) ? this.#defaultAnswer(request) : undefined);
    if (answer?.response) {
      // The test's own response: sent as it is, whatever the request.
      await this.clock.sleep(answer.delayMs ?? 0, request.signal);
      return await answer.response(request);
    }
    const invalid = isModelCall(request) ? invalidOf(request) : undefined;
    if (invalid) return failureResponse(request, invalid);
    if (!answer) return housekeepingResponse(request);
    if (answer.hang) {
      await new Promise<void>((resolve) =>
        request.signal.addEventListener("abort", () => resolve(), { once: true })
      );
      return new Response(null, { status: 504 });
    }
    const parts = partsOf(answer);
    if (answer.fail || !parts || !isModelCall(request)) {
      await this.clock.sleep(answer.delayMs ?? 0, request.signal);
      return answer.fail ? failureResponse(request, answer.fail) : housekeepingResponse(request);
    }
    request.cache = this.#cacheOf(request);
    return await modelResponse(request, parts, {
      clock: this.clock,
      profile: this.#profileOf(request, answer),
      random: this.#randomFor(request),
      delayMs: answer.delayMs ?? 0,
      holdLast: answer.holdLast,
    });
  }

  #profileOf(request: RecordedRequest, answer: Answer | undefined) {
    const { profiles, profile } = this.options;
    return answer?.profile ?? profiles?.[request.caller] ?? profiles?.[request.model] ??
      profile ?? INSTANT;
  }

  #defaultAnswer(request: RecordedRequest): Answer {
    const { answer } = this.options;
    const given = typeof answer === "function" ? answer(request) : answer;
    return given ?? { text: fillerAnswer(this.#profileOf(request, undefined).answerTokens) };
  }

  /** A PRNG seeded by the fake's seed, the caller, the model and how many came before. */
  #randomFor(request: RecordedRequest): () => number {
    const key = `${request.caller}\u0000${request.model}`;
    const n = this.#draws.get(key) ?? 0;
    this.#draws.set(key, n + 1);
    return seededRandom(hashOf(`${this.#seed}\u0000${key}\u0000${n}`));
  }

  #cacheOf(request: RecordedRequest): CacheReading {
    const scope = `${cacheKeyOf(request.headers, request.query)}\u0000${request.model}`;
    if (request.api === "messages") {
      return this.#explicit.use(scope, anthropicBlocks(request.body as Record<string, unknown>));
    }
    return this.#automatic.use(scope, request.prompt);
  }
}
