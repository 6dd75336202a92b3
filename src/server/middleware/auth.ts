/**
 * Inbound authentication (SPEC §5): the shared token presented as a bearer token or `x-api-key`,
 * compared in constant time; and the start-up rule that a remote bind needs a token.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isLoopbackHost } from "../../base/origins.ts";

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

/** The shortest token a non-loopback bind accepts: 16 characters are not guessed over HTTP. */
export const MIN_REMOTE_TOKEN_LENGTH = 16;

/**
 * Children run full-auto, so an open remote port would be remote code execution: a
 * non-loopback bind without a token is refused unless explicitly allowed, and one with a token
 * shorter than `MIN_REMOTE_TOKEN_LENGTH` characters always. Returns the one-line reason, or
 * null when the bind is acceptable.
 */
export function bindPolicyProblem(policy: BindPolicy): string | null {
  if (isLoopbackHost(policy.host)) return null;
  const where = `config: host: ${JSON.stringify(policy.host)} is reachable from other machines`;
  if (policy.token && [...policy.token].length < MIN_REMOTE_TOKEN_LENGTH) {
    return `${where} and the token (SVC_GATEWAY_TOKEN) has ${[...policy.token].length} ` +
      `characters; a remote bind needs at least ${MIN_REMOTE_TOKEN_LENGTH} (e.g. ` +
      "`openssl rand -hex 16`)";
  }
  if (policy.token || policy.allowUnauthenticatedRemote) return null;
  return `${where} and SVC_GATEWAY_TOKEN is not set; children run full-auto, so set a token ` +
    `or allowUnauthenticatedRemote: true`;
}
