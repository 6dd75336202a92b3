/**
 * Renders a council turn as Messages SSE frames: a pure state machine from `TurnEvent`s to
 * frames (progress thinking block, live answer block, whole tool_use block, message_delta/stop).
 *
 * Blocks strictly follow one another (the SDK applies deltas to the last block): the progress
 * block is closed before the answer or tool block opens, and never reopened.
 */
import type { TurnEvent } from "../../council/types.ts";
import { newProgressSignature } from "../ids.ts";
import type { SseFrame } from "../sse_writer.ts";
import type { TurnRenderer } from "../stream_turn.ts";
import { outputTokensOf } from "../usage.ts";
import { messagesUsage, outcomeBlock, stopReasonOf } from "./reply.ts";
import { streamErrorFrame } from "../error_envelope.ts";

interface MessagesStreamOptions {
  id: string;
  model: string;
  /** Estimated prompt tokens (non-zero), sent in message_start and message_delta. */
  inputTokens: number;
  /** Config `streamProgress`: open the progress thinking block at index 0. */
  progress: boolean;
}

function frame(event: string, data: Record<string, unknown> = {}): SseFrame {
  return { event, data: { type: event, ...data } };
}

function delta(index: number, delta: Record<string, unknown>): SseFrame {
  return frame("content_block_delta", { index, delta });
}

export class MessagesStream implements TurnRenderer {
  #options: MessagesStreamOptions;
  #open: "none" | "progress" | "text" = "none";
  #nextIndex = 0;
  #streamed = "";
  #finished = false;

  constructor(options: MessagesStreamOptions) {
    this.#options = options;
  }

  /** Whether message_stop (or an error) has been written. */
  get finished(): boolean {
    return this.#finished;
  }

  /** message_start, then the progress block when progress is on. */
  start(): SseFrame[] {
    const { id, model, inputTokens, progress } = this.#options;
    const frames = [frame("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: messagesUsage(inputTokens, 1),
      },
    })];
    if (progress) {
      frames.push(
        ...this.#openBlock("progress", { type: "thinking", thinking: "", signature: "" }),
      );
    }
    return frames;
  }

  /** The keep-alive frame (§6.2). */
  keepAlive(): SseFrame {
    return frame("ping");
  }

  /** Frames for one turn event (none once the message is finished). */
  event(event: TurnEvent): SseFrame[] {
    if (this.#finished) return [];
    switch (event.type) {
      case "progress":
        // Progress after the answer began has no block to go to (blocks never reopen).
        return this.#open === "progress"
          ? [delta(0, { type: "thinking_delta", thinking: `${event.text}\n` })]
          : [];
      case "answer_delta":
        return this.#answerDelta(event.text);
      case "done":
        return this.#done(event);
    }
  }

  /** A failure after the stream started: the error envelope, and the message ends there. */
  fail(message: string): SseFrame[] {
    if (this.#finished) return [];
    this.#finished = true;
    return [streamErrorFrame(message)];
  }

  #openBlock(kind: "progress" | "text", block: Record<string, unknown>): SseFrame[] {
    this.#open = kind;
    return [frame("content_block_start", { index: this.#nextIndex++, content_block: block })];
  }

  #closeBlock(): SseFrame[] {
    const index = this.#nextIndex - 1;
    const frames: SseFrame[] = [];
    if (this.#open === "progress") {
      frames.push(delta(index, { type: "signature_delta", signature: newProgressSignature() }));
    }
    if (this.#open !== "none") frames.push(frame("content_block_stop", { index }));
    this.#open = "none";
    return frames;
  }

  #answerDelta(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    if (this.#open !== "text") {
      frames.push(...this.#closeBlock(), ...this.#openBlock("text", { type: "text", text: "" }));
    }
    if (text) frames.push(delta(this.#nextIndex - 1, { type: "text_delta", text }));
    this.#streamed += text;
    return frames;
  }

  #done(event: Extract<TurnEvent, { type: "done" }>): SseFrame[] {
    const { outcome } = event;
    const frames: SseFrame[] = [];
    if (outcome.kind === "answer" && this.#open === "text") {
      // The deltas should add up to the answer; send any tail they missed.
      if (outcome.text.startsWith(this.#streamed) && outcome.text.length > this.#streamed.length) {
        frames.push(...this.#answerDelta(outcome.text.slice(this.#streamed.length)));
      }
      frames.push(...this.#closeBlock());
    } else if (outcome.kind === "answer") {
      // No live deltas (e.g. a tool-bearing turn that answered): the answer as one block.
      frames.push(...this.#closeBlock(), ...this.#answerDelta(outcome.text), ...this.#closeBlock());
    } else {
      const block = outcomeBlock(outcome, event.toolUseId);
      frames.push(
        ...this.#closeBlock(),
        frame("content_block_start", {
          index: this.#nextIndex,
          content_block: { ...block, input: {} },
        }),
        delta(this.#nextIndex, {
          type: "input_json_delta",
          partial_json: JSON.stringify(outcome.input),
        }),
        frame("content_block_stop", { index: this.#nextIndex }),
      );
      this.#nextIndex++;
    }
    this.#finished = true;
    frames.push(
      frame("message_delta", {
        delta: { stop_reason: stopReasonOf(outcome), stop_sequence: null },
        usage: {
          input_tokens: this.#options.inputTokens,
          output_tokens: outputTokensOf(outcome, event.usage),
        },
      }),
      frame("message_stop"),
    );
    return frames;
  }
}
