/** What the CLI touches, injectable for tests. */
export interface CliIo {
  env: (name: string) => string | undefined;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The whole of standard input (the status line reads Claude Code's JSON from it). */
  stdin?: () => Promise<string>;
}

const encoder = new TextEncoder();

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}

export const systemIo: CliIo = {
  env: (name) => Deno.env.get(name),
  cwd: Deno.cwd(),
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
  stdin: () =>
    Deno.stdin.isTerminal() ? Promise.resolve("") : new Response(Deno.stdin.readable).text(),
};
