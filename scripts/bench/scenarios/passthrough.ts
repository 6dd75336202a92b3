/**
 * Answer pass-through latency: the synthesizer writes a token stamped with the epoch time
 * (µs) every 10 ms; the client notes when each token arrives in a text_delta. Latency =
 * receive time − write time. Baseline: the bench reads the same fake's stdout directly. Run for
 * the plain `command` runner and for Claude Code's stream-json shape (a JSON parse per line).
 */
import { epochOffset, messagesBody, streamMessages } from "../client.ts";
import { runFake, SYNTH_PROMPT } from "../direct.ts";
import { councilConfig, fakeAgent, fakePath, startGateway } from "../processes.ts";
import { type Figure, summarize } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";

const TOKENS = 100;
const GAP_S = 0.01;
const TOKEN = /t(\d+)@(\d+)/g;

/**
 * Collects token latencies (receive time − stamp, ms), each token once: a CLI's final result
 * line repeats the whole text, and only a token's first arrival counts.
 */
export class TokenLatencies {
  readonly values: number[] = [];
  #seen = new Set<string>();

  /** Notes the tokens in `text`, received at `receivedAt` (epoch ms). */
  add(text: string, receivedAt: number): void {
    for (const m of text.matchAll(TOKEN)) {
      if (this.#seen.has(m[1])) continue;
      this.#seen.add(m[1]);
      this.values.push(receivedAt - Number(m[2]) / 1000);
    }
  }

  /** A new stream: token numbers start again. */
  reset(): void {
    this.#seen.clear();
  }
}

type Fake = "stream.sh" | "claude-stream.sh";

async function variant(context: BenchContext, fake: Fake, label: string): Promise<Figure> {
  const env = { BENCH_TOKENS: String(TOKENS), BENCH_TOKEN_GAP: String(GAP_S) };
  const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, fake, env));
  const gateway = await startGateway(context, councilConfig(agents));
  const through = new TokenLatencies();
  const direct = new TokenLatencies();
  const errors: string[] = [];
  try {
    await streamMessages(gateway.origin, messagesBody("Pass-through warm-up"));
    const count = runs(context, 4, 1);
    for (let i = 0; i < count; i++) {
      direct.reset();
      let offset = epochOffset();
      await runFake(fakePath(context, fake), env, SYNTH_PROMPT, (text, at) => {
        direct.add(text, at + offset);
      });
      through.reset();
      offset = epochOffset();
      const turn = await streamMessages(
        gateway.origin,
        messagesBody(`Pass-through turn ${i}`),
        { onTextDelta: (text, at) => through.add(text, at + offset) },
      );
      const failure = failureOf(turn, `t${TOKENS - 1}@`);
      if (failure) errors.push(failure);
      context.log(`passthrough ${label} ${i + 1}/${count}`);
    }
  } finally {
    await gateway.stop();
  }
  const latency = summarize(through.values);
  return {
    scenario: "passthrough",
    name: `Answer pass-through latency (${label})`,
    unit: "ms",
    gateway: latency,
    baseline: { label: "fake's stdout read directly", value: summarize(direct.values) },
    reference: "≤ 2 ms p99",
    note: `${through.values.length} tokens` +
      (errors.length ? `; ${errors.length} failed turns, first: ${errors[0]}` : ""),
  };
}

export const passthrough: Scenario = {
  name: "passthrough",
  description: "synthesizer token every 10 ms: client receive time − child write time",
  async run(context) {
    return {
      figures: [
        await variant(context, "stream.sh", "command runner, plain text"),
        await variant(context, "claude-stream.sh", "claude runner, stream-json"),
      ],
    };
  },
};
