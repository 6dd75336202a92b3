/**
 * The child's environment: the gateway's own, scrubbed so a child can never call back into
 * the gateway, plus the agent's explicit variables and a recursion marker.
 */
import { CREDENTIAL_VARIABLES, GATEWAY_TOKEN_VARIABLES } from "../base/secret_variables.ts";
import { endpointKey } from "../base/origins.ts";

/** Header every claude child sends (via ANTHROPIC_CUSTOM_HEADERS); the server refuses it. */
export const COUNCIL_DEPTH_HEADER = "x-council-depth";
/** Set to "1" in every child's environment. */
const CHILD_MARKER_VARIABLE = "COUNCIL_GATEWAY_CHILD";

/** Variables a host agent sets in the shells it spawns; a child must not look nested. */
const HOST_MARKER_VARIABLES: readonly string[] = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SESSION_ID",
  "CLAUDE_CODE_CHILD_SESSION",
  "CLAUDE_CODE_SSE_PORT",
  "CODEX_SANDBOX",
  "CODEX_SANDBOX_NETWORK_DISABLED",
  "CODEX_THREAD_ID",
  "CODEX_SESSION_ID",
  "GEMINI_CLI",
];

/** Variables that hold a base URL even when written without a scheme. */
const BASE_URL_NAME = /(BASE_URL|API_BASE|_ENDPOINT)$/;

/** Whether a variable's value is a URL that reaches one of the gateway's own origins. */
export function pointsAtSelf(name: string, value: string, selfOrigins: readonly string[]): boolean {
  const candidate = /^https?:\/\//i.test(value.trim())
    ? value
    : BASE_URL_NAME.test(name) && value.trim()
    ? `http://${value.trim()}`
    : undefined;
  if (candidate === undefined) return false;
  const key = endpointKey(candidate);
  return key !== undefined && selfOrigins.some((origin) => endpointKey(origin) === key);
}

interface ChildEnvOptions {
  /** The gateway's environment (or a test's stand-in). */
  base: Readonly<Record<string, string>>;
  passApiKeys: boolean;
  /**
   * Variables holding provider keys besides the well-known ones (the `apiKeyEnv` of HTTP
   * agents): kept from children like those, unless `passApiKeys`.
   */
  credentialVariables?: readonly string[];
  selfOrigins: readonly string[];
  /** What the CLI's adapter needs (e.g. IS_SANDBOX=1 for claude as root). */
  adapterEnv?: Readonly<Record<string, string>>;
  /** The host request's provider credentials; added only when `passApiKeys`. */
  hostCredentials?: Readonly<Record<string, string>>;
  /** The agent's explicit `env` from config: applied after scrubbing, so it wins. */
  agentEnv?: Readonly<Record<string, string>>;
  /**
   * Values no child gets under any name (the gateway's own token: a shell that ran
   * `connect claude` holds it as ANTHROPIC_AUTH_TOKEN, which passApiKeys would keep).
   */
  withheld?: readonly string[];
}

/** Appends the depth header to a newline-separated ANTHROPIC_CUSTOM_HEADERS value. */
function withDepthHeader(existing: string | undefined): string {
  const line = `${COUNCIL_DEPTH_HEADER}: 1`;
  if (!existing?.trim()) return line;
  if (existing.toLowerCase().includes(`${COUNCIL_DEPTH_HEADER}:`)) return existing;
  return `${existing.replace(/\n+$/, "")}\n${line}`;
}

/** The options the gateway's own variables are scrubbed by (the same for every child). */
type ScrubOptions = Pick<
  ChildEnvOptions,
  "base" | "passApiKeys" | "selfOrigins" | "withheld" | "credentialVariables"
>;

/**
 * A withheld value shorter than this is matched only whole: a short token (allowed on a
 * loopback bind) found inside PATH or HOME would otherwise leave the child without them.
 */
const MIN_CONTAINED_LENGTH = 8;

/** Whether `value` is, or contains, one of the withheld values. */
function holdsWithheld(value: string, withheld: readonly string[]): boolean {
  return withheld.some((secret) =>
    secret !== "" &&
    (value === secret || (secret.length >= MIN_CONTAINED_LENGTH && value.includes(secret)))
  );
}

/**
 * The gateway's variables a child may see: no SVC_*, no host markers, nothing that holds the
 * gateway token under any name (or, unless `passApiKeys`, a provider key), no credentials
 * unless `passApiKeys`, no URL that reaches the gateway (pure).
 */
export function scrubBaseEnv(options: ScrubOptions): Record<string, string> {
  const credentials = new Set([...CREDENTIAL_VARIABLES, ...(options.credentialVariables ?? [])]);
  const dropped = new Set([...HOST_MARKER_VARIABLES, ...GATEWAY_TOKEN_VARIABLES]);
  // Without passApiKeys a key copied under another name (MY_KEY=$OPENAI_API_KEY) stays out too.
  const keys = options.passApiKeys
    ? []
    : [...credentials].map((name) => options.base[name]).filter((v) => v !== undefined);
  const withheld = [...(options.withheld ?? []), ...keys];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.base)) {
    if (name.startsWith("SVC_")) continue;
    if (holdsWithheld(value, withheld)) continue;
    if (dropped.has(name)) continue;
    if (!options.passApiKeys && credentials.has(name)) continue;
    if (pointsAtSelf(name, value, options.selfOrigins)) continue;
    env[name] = value;
  }
  return env;
}

/** Builds a child's environment (pure: the caller supplies the base). */
export function childEnv(options: ChildEnvOptions): Record<string, string> {
  return childEnvFrom(scrubBaseEnv(options), options);
}

/** A child's environment from an already scrubbed base (`scrubBaseEnv` of the same options). */
export function childEnvFrom(
  scrubbed: Readonly<Record<string, string>>,
  options: Omit<ChildEnvOptions, "base" | "selfOrigins">,
): Record<string, string> {
  const env: Record<string, string> = { ...scrubbed };
  Object.assign(env, options.adapterEnv);
  if (options.passApiKeys) {
    for (const [name, value] of Object.entries(options.hostCredentials ?? {})) {
      if (!holdsWithheld(value, options.withheld ?? [])) env[name] = value;
    }
  }
  Object.assign(env, options.agentEnv);
  env[CHILD_MARKER_VARIABLE] = "1";
  env.ANTHROPIC_CUSTOM_HEADERS = withDepthHeader(env.ANTHROPIC_CUSTOM_HEADERS);
  return env;
}
