/**
 * Derives a TurnRequest from protocol-free input: working directory, classified ask, session
 * key, and whether the request is housekeeping.
 */
import { classifyAsk } from "./ask.ts";
import { classifyTraffic } from "./housekeeping.ts";
import { sessionKeyFor } from "../session_key.ts";
import type { TurnInput, TurnRequest } from "../types.ts";
import { recoverWorkingDirectory, type WorkspacePolicy } from "./workdir.ts";

/** Builds the council's TurnRequest from what the protocol layer extracted. */
export async function newTurnRequest(
  input: TurnInput,
  policy: WorkspacePolicy = {},
): Promise<TurnRequest> {
  const workdir = recoverWorkingDirectory(input.system, input.transcript, policy);
  const traffic = classifyTraffic(input);
  const session = await sessionKeyFor(input);
  return {
    ...input,
    // Housekeeping wants text (a title, a summary): a tool call would be no answer to it.
    tools: traffic.housekeeping ? [] : input.tools,
    id: crypto.randomUUID().slice(0, 8),
    cwd: workdir.path,
    ...(workdir.note ? { cwdNote: workdir.note } : {}),
    ask: classifyAsk(input.transcript),
    sessionKey: session.key,
    traffic,
  };
}
