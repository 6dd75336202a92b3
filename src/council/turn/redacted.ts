/**
 * A turn's events with every secret masked on their way out (progress lines, answer text), and
 * the provider keys its request forwards held as secrets for as long as the turn runs.
 */
import { type SecretRegistry, secrets } from "../../base/redact.ts";
import type { Outcome, TurnEvent, TurnRequest } from "../types.ts";

function redactOutcome(outcome: Outcome, registry: SecretRegistry): Outcome {
  // A proposed tool call is copied verbatim: masking its input would change what the host runs.
  return outcome.kind === "answer" ? { ...outcome, text: registry.redact(outcome.text) } : outcome;
}

/**
 * `events` with secrets masked. A streamed answer is masked across deltas: text that could be
 * the start of a secret waits for the next delta (or the end of the answer).
 */
export async function* redactedEvents(
  request: TurnRequest,
  events: AsyncIterable<TurnEvent>,
  registry: SecretRegistry = secrets,
): AsyncGenerator<TurnEvent> {
  const release = registry.hold(Object.values(request.hostCredentials ?? {}));
  const answer = registry.stream();
  try {
    for await (const event of events) {
      if (event.type === "answer_delta") {
        const text = answer.push(event.text);
        if (text) yield { ...event, text };
        continue;
      }
      const rest = answer.flush();
      if (rest) yield { type: "answer_delta", text: rest };
      if (event.type === "progress") yield { ...event, text: registry.redact(event.text) };
      else if (event.type === "done") {
        yield { ...event, outcome: redactOutcome(event.outcome, registry) };
      } else yield event;
    }
  } finally {
    release();
  }
}
