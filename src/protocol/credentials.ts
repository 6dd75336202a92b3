/**
 * The host's provider credentials, read from request headers, for children when `passApiKeys`
 * is on (CONTRACT.md §5.6). The gateway's own inbound token is never forwarded as a credential.
 */
import { maskSecret } from "../base/log.ts";

/** Which environment variable each credential header maps to. */
interface CredentialNames {
  /** Variable for an `x-api-key` header value. */
  apiKey?: string;
  /** Variable for an `Authorization: Bearer` value. */
  bearer?: string;
}

export const ANTHROPIC_CREDENTIALS: CredentialNames = {
  apiKey: "ANTHROPIC_API_KEY",
  bearer: "ANTHROPIC_AUTH_TOKEN",
};
export const OPENAI_CREDENTIALS: CredentialNames = { bearer: "OPENAI_API_KEY" };

function bearerOf(authorization: string | null): string | undefined {
  const match = authorization?.match(/^\s*Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/**
 * How a team's per-person keys start (the store's KEY_PREFIX): they are the gateway's own inbound
 * credentials, like its token, and never reach a child.
 */
export const PERSON_KEY_PREFIX = "cgk_";

/**
 * Credentials to forward, or undefined when forwarding is off or nothing usable was presented.
 */
export function hostCredentials(
  headers: Headers,
  names: CredentialNames,
  options: { passApiKeys: boolean; gatewayToken?: string },
): Record<string, string> | undefined {
  if (!options.passApiKeys) return undefined;
  const usable = (value: string | null | undefined): value is string =>
    !!value && value !== options.gatewayToken && !value.startsWith(PERSON_KEY_PREFIX);
  const found: Record<string, string> = {};
  const apiKey = headers.get("x-api-key")?.trim();
  if (names.apiKey && usable(apiKey)) found[names.apiKey] = apiKey;
  const bearer = bearerOf(headers.get("authorization"));
  if (names.bearer && usable(bearer)) found[names.bearer] = bearer;
  // Children may print what they were given; the log must not.
  for (const value of Object.values(found)) maskSecret(value);
  return Object.keys(found).length > 0 ? found : undefined;
}
