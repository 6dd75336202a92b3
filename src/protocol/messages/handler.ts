/** POST /v1/messages (placeholder until the Messages protocol lands). */
import type { ProtocolFactory } from "../handler.ts";

export const createMessagesHandler: ProtocolFactory = () => (c) =>
  c.json({ type: "error", error: { type: "api_error", message: "not implemented" } }, 501);
