/**
 * Inbound authentication (SPEC §5): the shared token presented as a bearer token or `x-api-key`,
 * compared in constant time; and the start-up rule that a remote bind needs a token.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isLoopbackHost } from "./origins.ts";

function sha256(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The token values a request presents: `Authorization: Bearer <t>` and/or `x-api-key: <t>`. */
export function presentedTokens(headers: Headers): string[] {
  const found: string[] = [];
  const authorization = headers.get("authorization");
  const bearer = authorization ? /^bearer\s+(.+)$/i.exec(authorization.trim()) : null;
  if (bearer) found.push(bearer[1].trim());
  const apiKey = headers.get("x-api-key");
  if (apiKey !== null && apiKey.trim() !== "") found.push(apiKey.trim());
  return found;
}

/**
 * Returns a check for requests: true when auth is off, or when one presented token equals the
 * configured one. SHA-256 digests of both sides are compared, so the comparison runs on
 * equal-length buffers in constant time whatever the presented length.
 */
export function createTokenCheck(token: string | undefined): (headers: Headers) => boolean {
  if (!token) return () => true;
  const expected = sha256(token);
  return (headers) => {
    let ok = false;
    for (const candidate of presentedTokens(headers)) {
      // No early exit: every presented value is compared.
      ok = timingSafeEqual(sha256(candidate), expected) || ok;
    }
    return ok;
  };
}

export interface BindPolicy {
  host: string;
  token?: string;
  allowUnauthenticatedRemote: boolean;
}

/**
 * Children run full-auto, so an open remote port would be remote code execution: a
 * non-loopback bind without a token is refused unless explicitly allowed. Returns the one-line
 * reason, or null when the bind is acceptable.
 */
export function bindPolicyProblem(policy: BindPolicy): string | null {
  if (policy.token || isLoopbackHost(policy.host) || policy.allowUnauthenticatedRemote) {
    return null;
  }
  return `config: host: ${JSON.stringify(policy.host)} is reachable from other machines and ` +
    `SVC_GATEWAY_TOKEN is not set; children run full-auto, so set a token or ` +
    `allowUnauthenticatedRemote: true`;
}
