/** What `doctor` learns from an HTTP agent's endpoint: reachable, and which models it lists. */
import type { AgentConfig } from "../../config/mod.ts";
import type { HttpAdapter } from "./http_api.ts";
import { describeFetchError, upstreamMessage } from "./upstream_errors.ts";
import { userInfoAsHeader } from "./url_credentials.ts";

/** What `doctor` learns from an endpoint. */
interface EndpointProbe {
  /** An HTTP answer came (any status). */
  reachable: boolean;
  status?: number;
  /** Listed model ids (undefined when the list could not be had). */
  models?: string[];
  /** Why not reachable, or the upstream's message for a non-2xx status. */
  error?: string;
}

/** GETs the adapter's models list with a short time limit. Never throws. */
export async function probeModels(
  adapter: HttpAdapter,
  agent: AgentConfig,
  apiKey: string | undefined,
  timeoutMs: number,
): Promise<EndpointProbe> {
  const listing = adapter.modelsRequest(agent, apiKey);
  const { url, headers } = userInfoAsHeader(listing.url, listing.headers);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { headers, signal, redirect: "manual" });
    const body = await response.text();
    if (!response.ok) {
      return {
        reachable: true,
        status: response.status,
        error: upstreamMessage(adapter, response.status, response.statusText, body),
      };
    }
    let models: string[] | undefined;
    try {
      models = adapter.modelIds(JSON.parse(body));
    } catch {
      models = undefined;
    }
    return { reachable: true, status: response.status, models };
  } catch (err) {
    return {
      reachable: false,
      error: signal.aborted ? `no answer within ${timeoutMs} ms` : describeFetchError(err),
    };
  }
}
