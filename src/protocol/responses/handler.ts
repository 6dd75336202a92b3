/** POST /v1/responses (placeholder until the Responses protocol lands). */
import type { ProtocolFactory } from "../handler.ts";

export const createResponsesHandler: ProtocolFactory = () => (c) =>
  c.json({ error: { type: "server_error", message: "not implemented" } }, 501);
