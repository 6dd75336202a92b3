/**
 * The one fake vendor API for tests and benches: a Deno.serve server on 127.0.0.1:0 speaking
 * Anthropic Messages, OpenAI Responses and Chat Completions, and Gemini, streamed and not, that
 * answers as its script says (text, JSON, tool calls, failures, hangs), paces answers by a latency
 * profile per caller or model, reports prompt-cache reads and writes, and records every request.
 */
import { realClock } from "./latency.ts";
import { type RecordedRequest, recordOf } from "./request.ts";
import { type FakeVendorOptions, Responder } from "./responder.ts";
import type { Matcher, Rule } from "./script.ts";

export type { Answer, Matcher, Rule } from "./script.ts";
export type { Failure, Part } from "./reply.ts";
export type { Api, RecordedRequest } from "./request.ts";
export { CALLER_HEADER, routeOf } from "./request.ts";
export type { LatencyProfile, PaceClock } from "./latency.ts";
export { INSTANT, realClock, VirtualClock } from "./latency.ts";
export type { FakeVendorOptions } from "./responder.ts";

export interface FakeVendor extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** Adds a rule (after those already there); `times` limits how many requests it answers. */
  on(match: Matcher, answer: Rule["answer"], times?: number): FakeVendor;
  /** Removes every rule. */
  reset(): void;
  /** Starts the latency draws afresh from `seed` (requests after it get the same draws again). */
  reseed(seed: number): void;
  /** Resolves when a client went away before its reply ended. */
  clientGone: Promise<void>;
  close(): Promise<void>;
}

/** Starts a fake vendor; dispose it (or `close`) to stop it. */
export function startFakeVendor(options: FakeVendorOptions = {}): FakeVendor {
  const clock = options.clock ?? realClock;
  const responder = new Responder(options, clock);
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const gone = Promise.withResolvers<void>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req, info) => {
      const raw = await req.text();
      const request = recordOf(req, raw, {
        index: requests.length,
        clientPort: info.remoteAddr.port,
        arrivedAt: clock.now(),
        signal: AbortSignal.any([req.signal, closing.signal]),
      });
      requests.push(request);
      req.signal.addEventListener("abort", () => gone.resolve(), { once: true });
      const response = await responder.reply(request);
      if (!request.status) request.status = response.status;
      if (response.status !== 200 || !request.stream) request.repliedAt = clock.now();
      return response;
    },
  );
  const vendor: FakeVendor = {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    on(match, answer, times) {
      responder.script.add({ match, answer, times });
      return vendor;
    },
    reset: () => responder.script.clear(),
    reseed: (seed) => responder.reseed(seed),
    clientGone: gone.promise,
    async close() {
      closing.abort();
      await server.shutdown();
    },
    [Symbol.asyncDispose]: () => vendor.close(),
  };
  return vendor;
}
