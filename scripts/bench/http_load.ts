/**
 * HTTP load for the utility endpoints: Debian's / Homebrew's `wrk` when it is on PATH (a C
 * client, so the gateway rather than the client is measured), else a built-in fetch loop.
 */
import { quantile } from "./results.ts";

export interface LoadRequest {
  url: string;
  method: "GET" | "POST";
  /** A JSON body for POST. */
  body?: string;
}

export interface LoadResult {
  tool: "wrk" | "fetch";
  requests: number;
  requestsPerSecond: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
  errors: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
}

/** Reads `wrk --latency` output: requests, req/s, 50% and 99% latency, socket/HTTP errors. */
export function parseWrkOutput(output: string): Omit<LoadResult, "tool"> {
  const percentile = (p: string) =>
    durationMs(new RegExp(`^\\s*${p}%\\s+(\\S+)`, "m").exec(output)?.[1] ?? "");
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/
    .exec(output)?.slice(1).reduce((sum, n) => sum + Number(n), 0) ?? 0;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  return {
    requests,
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
    p50: percentile("50"),
    p99: percentile("99"),
    errors: socketErrors + non2xx,
  };
}

/** wrk's Lua script for a POST whose body is read from $BENCH_BODY_FILE. */
const WRK_POST_SCRIPT = `
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local file = io.open(os.getenv("BENCH_BODY_FILE"), "rb")
wrk.body = file:read("*a")
file:close()
`;

let wrkPresent: boolean | undefined;

async function hasWrk(): Promise<boolean> {
  if (wrkPresent === undefined) {
    wrkPresent = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output().then(() => true, () => false);
  }
  return wrkPresent;
}

async function runWrk(
  request: LoadRequest,
  connections: number,
  seconds: number,
  tempDir: string,
): Promise<LoadResult> {
  const args = ["-t", "2", "-c", String(connections), "-d", `${seconds}s`, "--latency"];
  const env: Record<string, string> = {};
  if (request.method === "POST") {
    const script = `${tempDir}/wrk-post.lua`;
    const bodyFile = `${tempDir}/wrk-body.json`;
    await Deno.writeTextFile(script, WRK_POST_SCRIPT);
    await Deno.writeTextFile(bodyFile, request.body ?? "");
    args.push("-s", script);
    env.BENCH_BODY_FILE = bodyFile;
  }
  const out = await new Deno.Command("wrk", { args: [...args, request.url], env }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`wrk failed: ${new TextDecoder().decode(out.stderr)}`);
  return { tool: "wrk", ...parseWrkOutput(text) };
}

/** `connections` keep-alive fetch loops for `seconds`. */
async function runFetchLoad(
  request: LoadRequest,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const response = await fetch(request.url, {
          method: request.method,
          headers: request.body ? { "content-type": "application/json" } : undefined,
          body: request.body,
        });
        await response.arrayBuffer();
        if (!response.ok) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return {
    tool: "fetch",
    requests: latencies.length,
    requestsPerSecond: latencies.length / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    errors,
  };
}

/** Loads `request` with `connections` connections for `seconds` (wrk when available). */
export async function runLoad(
  request: LoadRequest,
  connections: number,
  seconds: number,
  tempDir: string,
): Promise<LoadResult> {
  return await hasWrk()
    ? await runWrk(request, connections, seconds, tempDir)
    : await runFetchLoad(request, connections, seconds);
}
