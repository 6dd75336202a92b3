/**
 * Messages requests of an action turn as a host sends them (the Read tool declared), and the
 * proposal a scripted child makes, for tests that follow a chosen call to its result.
 */
import assert from "node:assert/strict";
import { READ_TOOL } from "./scripted_agents.ts";

/** A child's proposal to read `path`. */
export const readProposal = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

const TOOLS = [{
  name: READ_TOOL.name,
  description: READ_TOOL.description,
  input_schema: READ_TOOL.inputSchema,
}];

/** POSTs `messages` (non-streaming, with the Read tool) and returns the reply; expects a 200. */
export async function postAction(origin: string, messages: unknown[]) {
  const response = await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-opus-4-8", max_tokens: 100, tools: TOOLS, messages }),
  });
  assert.equal(response.status, 200);
  return await response.json();
}
