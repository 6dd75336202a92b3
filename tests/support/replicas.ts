/**
 * N gateway replicas (real `main.ts serve` processes) on one database, each with its own temp dir
 * and the same config, plus the requests the team tests send them.
 */
import { join } from "node:path";
import { type GatewayProcess, spawnGateway } from "./gateway_process.ts";

export interface Replicas {
  gateways: GatewayProcess[];
  dir: string;
  /** Stops every replica still running (SIGTERM, then SIGKILL) and removes the dirs. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts `count` replicas of `config` with `database: url`; resolves once all listen. */
export async function startReplicas(
  count: number,
  url: string,
  config: Record<string, unknown>,
): Promise<Replicas> {
  const dir = await Deno.makeTempDir({ prefix: "cg-replicas-" });
  const gateways = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const own = join(dir, `r${i}`);
    await Deno.mkdir(own);
    return spawnGateway(own, { databaseHeartbeatMs: 200, ...config, database: url });
  }));
  return {
    gateways,
    dir,
    async [Symbol.asyncDispose]() {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A one-message Messages request of session `session` (non-streaming). */
export function messagesRequest(
  origin: string,
  session: string,
  text: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-claude-code-session-id": session,
      ...headers,
    },
    body: JSON.stringify({
      model: "claude-opus-4-8",
      max_tokens: 256,
      messages: [{ role: "user", content: text }],
    }),
  });
}

/** A one-message Responses request of session `session` (non-streaming). */
export function responsesRequest(
  origin: string,
  session: string,
  text: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${origin}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", "session-id": session, ...headers },
    body: JSON.stringify({ model: "gpt-5.5", input: text }),
  });
}

/** The text of a Messages reply (its text blocks joined). */
export async function replyText(response: Response): Promise<string> {
  const body = await response.json();
  return (body.content ?? []).map((block: { text?: string }) => block.text ?? "").join("");
}
