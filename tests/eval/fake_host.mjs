#!/usr/bin/env node
// A stand-in for `claude -p PROMPT` in eval tests: it sends the prompt to $ANTHROPIC_BASE_URL
// with one Write tool, writes the file a tool_use asks for (relative to its cwd), answers with a
// tool_result, and stops at the first reply without a tool call (at most 6 requests).
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";

const prompt = process.argv[process.argv.indexOf("-p") + 1];
const base = process.env.ANTHROPIC_BASE_URL;
const tools = [{
  name: "Write",
  description: "Writes a file.",
  input_schema: {
    type: "object",
    properties: { file_path: { type: "string" }, content: { type: "string" } },
    required: ["file_path", "content"],
  },
}];
const system = "You are a coding agent.\n# Environment\n - Primary working directory: " +
  process.cwd() + "\n";
const messages = [{ role: "user", content: prompt }];
for (let i = 0; i < 6; i++) {
  const response = await fetch(`${base}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      authorization: `Bearer ${process.env.ANTHROPIC_AUTH_TOKEN}`,
    },
    body: JSON.stringify({ model: "claude-opus-4-8", max_tokens: 1000, system, tools, messages }),
  });
  const reply = await response.json();
  if (!response.ok) {
    console.error(JSON.stringify(reply));
    process.exit(1);
  }
  messages.push({ role: "assistant", content: reply.content });
  const call = reply.content.find((block) => block.type === "tool_use");
  if (!call) {
    console.log(JSON.stringify({ result: reply.content.map((b) => b.text ?? "").join("") }));
    process.exit(0);
  }
  writeFileSync(resolve(call.input.file_path), call.input.content);
  messages.push({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: call.id, content: "WROTE-OK" }],
  });
}
process.exit(1);
