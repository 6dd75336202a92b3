/** The start-up rule that a bind reachable from other machines needs a long enough token. */
import { isLoopbackHost } from "../base/origins.ts";

interface BindPolicy {
  host: string;
  token?: string;
  allowUnauthenticatedRemote: boolean;
}

/** The shortest token a non-loopback bind accepts: 16 characters are not guessed over HTTP. */
const MIN_REMOTE_TOKEN_LENGTH = 16;

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
