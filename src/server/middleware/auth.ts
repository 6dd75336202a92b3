/**
 * Inbound authentication (CONTRACT.md §5): the shared token presented as a bearer token or `x-api-key`,
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";

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
