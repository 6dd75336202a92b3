/**
 * Model stubs that script a real CLI into trying to write: first with its file-writing tool,
 * then with a shell redirect, then reading a file; the last reply is plain text. Each request's
 * step is the number of tool results it carries, so retries replay the same step.
 */
import { frame, sseResponse, type StubHandler } from "./model_api_stub.ts";

/** What a write-attempt script touches inside `dir`. */
export interface WriteAttempt {
  /** Files the tools try to create (none may appear when read-only). */
  written: string[];
  /** A file the script reads; its content must reach the model. */
  readable: string;
  readableText: string;
}

export function writeAttempt(dir: string): WriteAttempt {
  return {
    written: [`${dir}/tool-wrote.txt`, `${dir}/shell-wrote.txt`],
    readable: `${dir}/notes.txt`,
    readableText: "the notes say hello",
  };
}

/** Whether the read file's content reached the model (in a tool result the CLI sent back). */
export function modelSawReadable(bodies: unknown[], attempt: WriteAttempt): boolean {
  return bodies.some((body) => (JSON.stringify(body) ?? "").includes(attempt.readableText));
}

/** The scripts' last reply unless a test gives its own. */
export const FINAL_TEXT = "Finished trying.";

/** Anthropic Messages: Write, Bash redirect, Read. */
export function anthropicWriter(attempt: WriteAttempt, finalText = FINAL_TEXT): StubHandler {
  const [tool, shell] = attempt.written;
  const steps = [
    { name: "Write", input: { file_path: tool, content: "from the Write tool\n" } },
    { name: "Bash", input: { command: `echo shell > ${shell}`, description: "write a file" } },
    { name: "Read", input: { file_path: attempt.readable } },
  ];
  return ({ method, path, body }) => {
    // Claude Code 2.1.197 opens with a bodiless `HEAD /` preconnect.
    if (method !== "POST") return new Response(null);
    if (path.endsWith("/count_tokens")) return Response.json({ input_tokens: 10 });
    const messages = (body as { messages: { content: unknown }[] }).messages;
    const step =
      messages.flatMap((m) =>
        Array.isArray(m.content) ? m.content.filter((b) => b?.type === "tool_result") : []
      ).length;
    const model = (body as { model: string }).model;
    const message = {
      id: `msg_${step}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    };
    const next = steps[step];
    const block = next
      ? { type: "tool_use", id: `toolu_${step}`, name: next.name, input: {} }
      : { type: "text", text: "" };
    const delta = next
      ? { type: "input_json_delta", partial_json: JSON.stringify(next.input) }
      : { type: "text_delta", text: finalText };
    return sseResponse([
      frame("message_start", { type: "message_start", message }),
      frame("content_block_start", { type: "content_block_start", index: 0, content_block: block }),
      frame("content_block_delta", { type: "content_block_delta", index: 0, delta }),
      frame("content_block_stop", { type: "content_block_stop", index: 0 }),
      frame("message_delta", {
        type: "message_delta",
        delta: { stop_reason: next ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
      }),
      frame("message_stop", { type: "message_stop" }),
    ]);
  };
}

/** OpenAI Responses (codex): a shell redirect, apply_patch adding a file, `cat`. */
export function responsesWriter(attempt: WriteAttempt, finalText = FINAL_TEXT): StubHandler {
  const [tool, shell] = attempt.written;
  const steps = [
    {
      type: "custom_tool_call",
      name: "apply_patch",
      input: `*** Begin Patch\n*** Add File: ${tool}\n+from apply_patch\n*** End Patch\n`,
    },
    {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd: `echo shell > ${shell}` }),
    },
    {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd: `cat ${attempt.readable}` }),
    },
  ];
  return ({ body }) => {
    const input = (body as { input: { type: string }[] }).input;
    const step = input.filter((i) => i.type.endsWith("_call_output")).length;
    const next = steps[step];
    const item = next
      ? { id: `it_${step}`, status: "completed", call_id: `call_${step}`, ...next }
      : {
        id: "msg_final",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: finalText, annotations: [] }],
      };
    const response = {
      id: `resp_${step}`,
      object: "response",
      status: "completed",
      output: [item],
    };
    const usage = {
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 27,
    };
    return sseResponse([
      frame("response.created", {
        type: "response.created",
        response: { ...response, status: "in_progress", output: [] },
      }),
      frame("response.output_item.done", {
        type: "response.output_item.done",
        output_index: 0,
        item,
      }),
      frame("response.completed", { type: "response.completed", response: { ...response, usage } }),
    ]);
  };
}

/** Gemini API: write_file, run_shell_command, read_file. */
export function geminiWriter(attempt: WriteAttempt, finalText = FINAL_TEXT): StubHandler {
  const [tool, shell] = attempt.written;
  const steps = [
    { name: "write_file", args: { file_path: tool, content: "from write_file\n" } },
    { name: "run_shell_command", args: { command: `echo shell > ${shell}` } },
    { name: "read_file", args: { file_path: attempt.readable } },
  ];
  return ({ body }) => {
    const contents = (body as { contents?: { parts?: Record<string, unknown>[] }[] }).contents;
    const step = (contents ?? []).flatMap((c) => (c.parts ?? []).filter((p) => p.functionResponse))
      .length;
    const next = steps[step];
    const chunk = {
      candidates: [{
        content: { role: "model", parts: [next ? { functionCall: next } : { text: finalText }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    };
    return sseResponse([frame(undefined, chunk)]);
  };
}
