/**
 * `doctor`'s look at the gateway already running this configuration: each agent's health there.
 * An agent cooling down is a problem (the council skips it); one that failed less is shown only.
 */
import { fetchStatus } from "../daemon/gateway_client.ts";
import { agentsWithHealth, healthDetail } from "./health_text.ts";

interface GatewayHealth {
  /** A table's rows (header first); empty when the gateway tells no health. */
  rows: string[][];
  problems: string[];
  /** Why there is no table, when the status could not be read. */
  note?: string;
}

export async function gatewayHealth(
  origin: string,
  token: string | undefined,
  timeoutMs = 1000,
): Promise<GatewayHealth> {
  const reply = await fetchStatus(origin, { token, timeoutMs });
  if (!reply.ok) {
    return { rows: [], problems: [], note: `agent health on ${origin}: unknown (${reply.reason})` };
  }
  const agents = agentsWithHealth(reply.status.agents);
  if (agents.length === 0) return { rows: [], problems: [] };
  const rows = [
    ["AGENT", `HEALTH ON THE RUNNING GATEWAY (${origin})`],
    ...agents.map(({ agent, health }) => [agent, healthDetail(health)]),
  ];
  const problems = agents.filter(({ health }) => health.state === "cooling-down")
    .map(({ agent, health }) =>
      `${agent}: ${healthDetail(health)} (the running gateway skips it until then)`
    );
  return { rows, problems };
}
