/**
 * A long coding session in the shape Claude Code sends it, built from our own texts: a system
 * prompt of a few blocks, a dozen tools, a first user message with an injected reminder, the
 * environment as a `role:"system"` message, then tool round trips (file reads, shell output,
 * searches, edits) with short narration and occasional reasoning, and a new user ask now and
 * then. Each host request repeats the whole history, as Claude Code does. Deterministic (seeded).
 */

import { seededRandom } from "./fake_vendor/latency.ts";

type Json = Record<string, unknown>;

const WORDS = (
  "parser token cache session budget window prompt child council agent request reply stream " +
  "buffer schema config ledger record turn answer proposal tool result error retry timeout " +
  "signal process group header route server client queue limit offset cursor index module"
).split(" ");

function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)];
}

function words(rng: () => number, n: number): string {
  return Array.from({ length: n }, () => pick(rng, WORDS)).join(" ");
}

/** Numbered source lines, as a file-reading tool shows them, about `chars` long. */
function sourceFile(rng: () => number, chars: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < chars; n++) {
    const indent = "  ".repeat(Math.floor(rng() * 3));
    const a = pick(rng, WORDS);
    const b = pick(rng, WORDS);
    const body = pick(rng, [
      `export function ${a}Of(${b}: ${capital(b)}): ${capital(a)} {`,
      `const ${a} = await ${b}.${pick(rng, WORDS)}(${pick(rng, WORDS)});`,
      `if (!${a}.${b}) return undefined;`,
      `// ${capital(words(rng, 8))}.`,
      `return { ${a}, ${b}: ${b}.length };`,
      `}`,
    ]);
    const line = `${String(n).padStart(6)}\t${indent}${body}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

function capital(word: string): string {
  return word[0].toUpperCase() + word.slice(1);
}

function shellOutput(rng: () => number, chars: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < chars) {
    const line = pick(rng, [
      `ok | ${Math.floor(rng() * 300)} passed | 0 failed (${Math.floor(rng() * 90)}s)`,
      `${pick(rng, WORDS)}_test.ts => ${words(rng, 4)} ... ok (${Math.floor(rng() * 40)}ms)`,
      `error: AssertionError: expected ${pick(rng, WORDS)} to equal ${pick(rng, WORDS)}`,
      `    at file:///work/project/src/${pick(rng, WORDS)}.ts:${Math.floor(rng() * 400)}:7`,
    ]);
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

function searchOutput(rng: () => number, chars: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < chars) {
    const line = `src/${pick(rng, WORDS)}/${pick(rng, WORDS)}.ts:${Math.floor(rng() * 500)}:  ${
      words(rng, 7)
    }`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

const TOOL_NAMES = [
  "Read",
  "Edit",
  "Write",
  "Bash",
  "Grep",
  "Glob",
  "TodoWrite",
  "WebFetch",
  "Task",
  "NotebookEdit",
  "BashOutput",
  "KillShell",
];

/** Tools with our own descriptions and schemas (a real host declares two dozen). */
export function sessionTools(rng = seededRandom(7)): Json[] {
  return TOOL_NAMES.map((name) => ({
    name,
    description: `${name}: ${capital(words(rng, 60))}. ${capital(words(rng, 80))}.`,
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string", description: capital(words(rng, 12)) },
        pattern: { type: "string", description: capital(words(rng, 12)) },
        command: { type: "string", description: capital(words(rng, 12)) },
      },
      required: name === "Read" ? ["file_path"] : [],
    },
  }));
}

function systemBlocks(rng: () => number): Json[] {
  const guidelines = Array.from(
    { length: 120 },
    (_, i) => `${i + 1}. ${capital(words(rng, 14))}.`,
  ).join("\n");
  return [
    { type: "text", text: "x-anthropic-billing-header: cc_version=9.9.9; cc_entrypoint=bench;" },
    { type: "text", text: "You are a coding agent working in the user's repository." },
    { type: "text", text: `# How to work\n${guidelines}`, cache_control: { type: "ephemeral" } },
  ];
}

/** What the assistant does on one step: a tool call, and the result the host sends back. */
function step(rng: () => number, i: number, scale: number) {
  const id = `toolu_bench_${String(i).padStart(3, "0")}`;
  const kind = rng();
  const file = `/work/project/src/${pick(rng, WORDS)}.ts`;
  if (kind < 0.45) {
    return {
      id,
      name: "Read",
      input: { file_path: file },
      result: sourceFile(rng, Math.round((3000 + rng() * 9000) * scale)),
    };
  }
  if (kind < 0.7) {
    return {
      id,
      name: "Bash",
      input: { command: `deno test -A tests/${pick(rng, WORDS)}_test.ts` },
      result: shellOutput(rng, Math.round((1000 + rng() * 5000) * scale)),
    };
  }
  if (kind < 0.85) {
    return {
      id,
      name: "Grep",
      input: { pattern: pick(rng, WORDS) },
      result: searchOutput(rng, Math.round((1000 + rng() * 2000) * scale)),
    };
  }
  return {
    id,
    name: "Edit",
    input: {
      file_path: file,
      old_string: sourceFile(rng, Math.round(700 * scale)),
      new_string: sourceFile(rng, Math.round(800 * scale)),
    },
    result: `The file ${file} has been updated.`,
  };
}

function reminder(rng: () => number): string {
  return `<system-reminder>\nProject notes:\n${
    Array.from({ length: 30 }, () => `- ${capital(words(rng, 12))}.`).join("\n")
  }\n</system-reminder>\n`;
}

/** The conversation's messages after `requests` host requests (the first is request 0). */
function buildMessages(requests: number, scale: number, cwd: string): Json[][] {
  const rng = seededRandom(24);
  const messages: Json[] = [
    {
      role: "user",
      content: [
        { type: "text", text: reminder(rng) },
        {
          type: "text",
          text: "The session tests fail after the refactor. Find out why and fix it.",
        },
      ],
    },
    {
      role: "system",
      content: [{
        type: "text",
        text: `# Environment\n - Primary working directory: ${cwd}\n - Platform: linux`,
      }],
    },
  ];
  const bodies: Json[][] = [structuredClone(messages)];
  for (let i = 1; i < requests; i++) {
    const s = step(rng, i, scale);
    const content: Json[] = [];
    if (rng() < 0.3) {
      content.push({ type: "thinking", thinking: capital(words(rng, 60)), signature: "c2ln" });
    }
    content.push({ type: "text", text: `${capital(words(rng, 18))}.` });
    content.push({ type: "tool_use", id: s.id, name: s.name, input: s.input });
    messages.push({ role: "assistant", content });
    const reply: Json[] = [{ type: "tool_result", tool_use_id: s.id, content: s.result }];
    if (i % 15 === 0) {
      reply.push({ type: "text", text: `${reminder(rng)}Also ${words(rng, 12)}, then go on.` });
    }
    messages.push({ role: "user", content: reply });
    bodies.push(structuredClone(messages));
  }
  return bodies;
}

/** Characters of a conversation's content (texts, tool inputs, results). */
export function conversationChars(messages: readonly Json[]): number {
  let chars = 0;
  for (const message of messages) {
    for (const block of message.content as Json[]) {
      if (typeof block.text === "string") chars += block.text.length;
      else if (typeof block.thinking === "string") chars += block.thinking.length;
      else if (block.type === "tool_use") chars += JSON.stringify(block.input).length;
      else if (typeof block.content === "string") chars += block.content.length;
    }
  }
  return chars;
}

export interface SessionOptions {
  requests: number;
  /** The conversation's size at the last request, in characters (approximately). */
  finalChars: number;
  /** The working directory the environment message names. */
  cwd: string;
}

/** The host's Messages request bodies, one per request, growing to about `finalChars`. */
export function claudeCodeSession(options: SessionOptions): Json[] {
  let scale = 1;
  let bodies: Json[][] = [];
  let best = Infinity;
  // Scale the tool outputs until the last request is within 2 % of the wanted size (the draws
  // shift with the scale, so the closest attempt is kept).
  for (let round = 0; round < 16 && best > 0.02; round++) {
    const attempt = buildMessages(options.requests, scale, options.cwd);
    const chars = conversationChars(attempt.at(-1)!);
    const miss = Math.abs(chars - options.finalChars) / options.finalChars;
    if (miss < best) [best, bodies] = [miss, attempt];
    scale *= Math.sqrt(options.finalChars / chars);
  }
  const rng = seededRandom(3);
  const system = systemBlocks(rng);
  const tools = sessionTools();
  return bodies.map((messages) => ({
    model: "claude-opus-5-5",
    max_tokens: 128000,
    stream: true,
    thinking: { type: "adaptive" },
    system,
    tools,
    messages,
  }));
}
