/**
 * What both protocols do between a parsed body and a council turn: the host's attachments
 * checked against the policy (or the refusal that says why not), then the turn request and its
 * input-token estimate.
 */
import { newTurnRequest } from "../council/request/turn_request.ts";
import type { TurnInput, TurnRequest } from "../council/types.ts";
import {
  applyAttachmentPolicy,
  DEFAULT_ATTACHMENT_POLICY,
  isRefusal,
} from "./attachment_policy.ts";
import type { ProtocolDeps } from "./protocol_handler.ts";
import { inputTokensOf } from "./usage.ts";

export type TurnSetup =
  | { kind: "refused"; status: 400 | 413; message: string }
  | { kind: "ready"; request: TurnRequest; inputTokens: number };

/** The turn for `input`, or why its attachments are refused. */
export async function setUpTurn(
  deps: ProtocolDeps,
  input: TurnInput,
  signal: AbortSignal,
): Promise<TurnSetup> {
  const checked = await applyAttachmentPolicy(
    input,
    deps.attachments ?? DEFAULT_ATTACHMENT_POLICY,
    signal,
  );
  if (isRefusal(checked)) return { kind: "refused", ...checked };
  const request = await newTurnRequest(checked, deps.workspace);
  return { kind: "ready", request, inputTokens: inputTokensOf(checked) };
}
