/**
 * Renders a council turn as Responses SSE events: a pure state machine from `TurnEvent`s to
 * frames (progress reasoning item, live message item, `response.completed` with the full output).
 *
 * Every event carries a strictly increasing `sequence_number`; items are opened and closed one
 * after another, and `output_item.done` always carries the complete item (Codex reads only that).
 */
import type { TurnEvent } from "../../council/types.ts";
import { newId, newProgressItemId, newProgressSignature } from "../ids.ts";
import type { SseFrame } from "../sse_writer.ts";
import type { TurnRenderer } from "../stream_turn.ts";
import {
  answerText,
  answerTokens,
  messageItem,
  type OutputItem,
  outputText,
  type ReasoningItem,
  type ResponseHead,
  responseObject,
  responsesUsage,
} from "./reply.ts";

/** First words of the summary: Codex shows the first bold span as its live status line. */
export const PROGRESS_TITLE = "**Consulting the council**";

interface ResponsesStreamOptions {
  head: ResponseHead;
  /** Estimated prompt tokens (non-zero). */
  inputTokens: number;
  /** Config `streamProgress`: open the progress reasoning item at output_index 0. */
  progress: boolean;
}

interface OpenItem {
  id: string;
  index: number;
  text: string;
}

export class ResponsesStream implements TurnRenderer {
  #options: ResponsesStreamOptions;
  #sequence = 0;
  #output: OutputItem[] = [];
  #reasoning: OpenItem | undefined;
  #message: OpenItem | undefined;
  #finished = false;

  constructor(options: ResponsesStreamOptions) {
    this.#options = options;
  }

  /** Whether a terminal event (`response.completed` / `response.failed`) has been written. */
  get finished(): boolean {
    return this.#finished;
  }

  /** `response.created`, `response.in_progress`, then the progress item when progress is on. */
  start(): SseFrame[] {
    const frames = [this.#lifecycle("response.created"), this.#lifecycle("response.in_progress")];
    if (this.#options.progress) frames.push(...this.#openReasoning());
    return frames;
  }

  /** The keep-alive event (§6.2): another `response.in_progress`. */
  keepAlive(): SseFrame {
    return this.#lifecycle("response.in_progress");
  }

  /** Frames for one turn event (none once the response is finished). */
  event(event: TurnEvent): SseFrame[] {
    if (this.#finished) return [];
    switch (event.type) {
      case "progress":
        // Progress after the answer began has no item to go to (items never reopen).
        return this.#reasoning ? this.#reasoningDelta(`${event.text}\n`) : [];
      case "answer_delta":
        return this.#answerDelta(event.text);
      case "done":
        return this.#done(event);
    }
  }

  /** A failure: `response.failed` with `error {code, message}` (Codex ignores plain `error`). */
  fail(message: string, code = "server_error"): SseFrame[] {
    if (this.#finished) return [];
    this.#finished = true;
    const response = responseObject(this.#options.head, "failed", this.#output, null, {
      code,
      message,
    });
    return [this.#frame("response.failed", { response })];
  }

  #frame(type: string, fields: Record<string, unknown>): SseFrame {
    return { event: type, data: { type, sequence_number: this.#sequence++, ...fields } };
  }

  #lifecycle(type: "response.created" | "response.in_progress"): SseFrame {
    const response = responseObject(this.#options.head, "in_progress", [...this.#output], null);
    return this.#frame(type, { response });
  }

  #openReasoning(): SseFrame[] {
    const item = { id: newProgressItemId(), index: this.#output.length, text: "" };
    this.#reasoning = item;
    return [
      this.#frame("response.output_item.added", {
        output_index: item.index,
        item: { id: item.id, type: "reasoning", summary: [] },
      }),
      this.#frame("response.reasoning_summary_part.added", {
        item_id: item.id,
        output_index: item.index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      }),
      ...this.#reasoningDelta(`${PROGRESS_TITLE}\n\n`),
    ];
  }

  #reasoningDelta(delta: string): SseFrame[] {
    const item = this.#reasoning!;
    item.text += delta;
    return [this.#frame("response.reasoning_summary_text.delta", {
      item_id: item.id,
      output_index: item.index,
      summary_index: 0,
      delta,
    })];
  }

  #closeReasoning(): SseFrame[] {
    const item = this.#reasoning;
    if (!item) return [];
    this.#reasoning = undefined;
    const part = { type: "summary_text" as const, text: item.text };
    const done: ReasoningItem = {
      id: item.id,
      type: "reasoning",
      summary: [part],
      encrypted_content: newProgressSignature(),
    };
    this.#output.push(done);
    const at = { item_id: item.id, output_index: item.index, summary_index: 0 };
    return [
      this.#frame("response.reasoning_summary_text.done", { ...at, text: item.text }),
      this.#frame("response.reasoning_summary_part.done", { ...at, part }),
      this.#frame("response.output_item.done", { output_index: item.index, item: done }),
    ];
  }

  #answerDelta(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    let item = this.#message;
    if (!item) {
      frames.push(...this.#closeReasoning());
      item = { id: newId("msg_"), index: this.#output.length, text: "" };
      this.#message = item;
      frames.push(
        this.#frame("response.output_item.added", {
          output_index: item.index,
          item: messageItem(item.id, "", "in_progress"),
        }),
        this.#frame("response.content_part.added", {
          item_id: item.id,
          output_index: item.index,
          content_index: 0,
          part: outputText(""),
        }),
      );
    }
    if (text) {
      item.text += text;
      frames.push(this.#frame("response.output_text.delta", {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        delta: text,
        logprobs: [],
      }));
    }
    return frames;
  }

  #closeMessage(): SseFrame[] {
    const item = this.#message!;
    this.#message = undefined;
    const done = messageItem(item.id, item.text, "completed");
    this.#output.push(done);
    const at = { item_id: item.id, output_index: item.index, content_index: 0 };
    return [
      this.#frame("response.output_text.done", { ...at, text: item.text, logprobs: [] }),
      this.#frame("response.content_part.done", { ...at, part: outputText(item.text) }),
      this.#frame("response.output_item.done", { output_index: item.index, item: done }),
    ];
  }

  #done(event: Extract<TurnEvent, { type: "done" }>): SseFrame[] {
    // Also when no agent produced anything (`event.failed`): the explanation is a normal,
    // completed answer. Codex retries a `response.failed` five times, each a full council.
    const text = answerText(event.outcome);
    const frames: SseFrame[] = [];
    const streamed = this.#message?.text ?? "";
    if (!this.#message) {
      // No live deltas: the answer as one delta.
      frames.push(...this.#answerDelta(text));
    } else if (text.startsWith(streamed) && text.length > streamed.length) {
      // The deltas should add up to the answer; send any tail they missed.
      frames.push(...this.#answerDelta(text.slice(streamed.length)));
    }
    frames.push(...this.#closeMessage());
    this.#finished = true;
    const usage = responsesUsage(
      this.#options.inputTokens,
      answerTokens(event.outcome, event.usage),
    );
    const response = responseObject(this.#options.head, "completed", this.#output, usage);
    frames.push(this.#frame("response.completed", { response }));
    return frames;
  }
}
