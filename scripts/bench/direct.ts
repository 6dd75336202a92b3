/**
 * Baselines without the gateway: the bench spawns the same fakes itself, so "the children's own
 * wall time (spawn to exit)" is measured by a minimal parent, on the same machine, in the same run.
 */
import { SYSTEM_PROMPT } from "./client.ts";

/** What a child's prompt roughly looks like (the system prompt and the ask). */
export const CHILD_PROMPT = `${SYSTEM_PROMPT}\n\nUser: benchmark ask\n`;
/** A synthesizer's prompt: the conversation plus three candidates (the fakes key on them). */
export const SYNTH_PROMPT = `${CHILD_PROMPT}\n${
  ["A", "B", "C"].map((c) => `Candidate ${c}:\nBENCH-CANDIDATE\n`).join("\n")
}`;

export interface FakeRun {
  /** Spawn → exit and stdout closed, ms. */
  wallMs: number;
  stdout: string;
}

/** Runs a fake with `prompt` on stdin; `onChunk` sees each stdout chunk as it is read. */
export async function runFake(
  command: string,
  env: Record<string, string>,
  prompt: string,
  onChunk?: (text: string, receivedAt: number) => void,
): Promise<FakeRun> {
  const started = performance.now();
  const child = new Deno.Command(command, {
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const fed = writer.write(new TextEncoder().encode(prompt)).then(() => writer.close()).catch(
    () => {},
  );
  const decoder = new TextDecoder();
  let stdout = "";
  for await (const chunk of child.stdout) {
    const text = decoder.decode(chunk, { stream: true });
    onChunk?.(text, performance.now());
    stdout += text;
  }
  await Promise.all([fed, child.status]);
  return { wallMs: performance.now() - started, stdout };
}

/** A council run by hand: `size` children in parallel, then the synthesizer. Wall time, ms. */
export async function directCouncil(
  command: string,
  env: Record<string, string>,
  size = 3,
): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: size }, () => runFake(command, env, CHILD_PROMPT)));
  await runFake(command, env, SYNTH_PROMPT);
  return performance.now() - started;
}
