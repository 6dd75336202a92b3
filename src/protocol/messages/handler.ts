/** POST /v1/messages: validate the body, run a council turn, answer as JSON or SSE. */
import { getLogger } from "@logtape/logtape";
import type { Context } from "hono";
import { describeTraffic } from "../../council/request/housekeeping.ts";
import type { TurnRequest } from "../../council/types.ts";
import { ANTHROPIC_CREDENTIALS, hostCredentials } from "../credentials.ts";
import type { ProtocolDeps, ProtocolFactory } from "../protocol_handler.ts";
import { newId } from "../ids.ts";
import { describeInvalid } from "../invalid.ts";
import { setUpTurn } from "../turn_setup.ts";
import { streamTurn, TURN_FAILED } from "../stream_turn.ts";
import { collectTurn } from "../consume_turn.ts";
import { outputTokensOf } from "../usage.ts";
import { errorReply } from "../error_envelope.ts";
import { messagesReply } from "./reply.ts";
import { type MessagesRequest, MessagesRequestSchema, messagesTurnInput } from "./request.ts";
import { messagesHints } from "./hints.ts";
import { MessagesStream } from "./stream.ts";

const logger = getLogger(["council-gateway", "messages"]);

function streamReply(
  deps: ProtocolDeps,
  c: Context,
  request: TurnRequest,
  inputTokens: number,
): Response {
  const renderer = new MessagesStream({
    id: newId("msg_"),
    model: request.model,
    inputTokens,
    progress: deps.streamProgress,
  });
  return streamTurn({
    runTurn: deps.runTurn,
    request,
    renderer,
    keepAliveMs: deps.keepAliveMs,
    clock: deps.clock,
    requestSignal: c.req.raw.signal,
    log: logger.with({ turn: request.id }),
  });
}

async function jsonReply(
  deps: ProtocolDeps,
  c: Context,
  request: TurnRequest,
  inputTokens: number,
): Promise<Response> {
  const turn = await collectTurn(deps.runTurn, request, c.req.raw.signal);
  const { outcome, usage } = turn;
  return c.json(
    messagesReply(request.model, outcome, {
      inputTokens,
      outputTokens: outputTokensOf(outcome, usage),
    }, turn.toolUseId),
  );
}

async function handle(
  deps: ProtocolDeps,
  c: Context,
  parsed: MessagesRequest,
  body: unknown,
): Promise<Response> {
  const credentials = hostCredentials(c.req.raw.headers, ANTHROPIC_CREDENTIALS, deps);
  const hints = messagesHints(c.req.raw.headers, body);
  const setup = await setUpTurn(
    deps,
    messagesTurnInput(parsed, credentials, hints),
    c.req.raw.signal,
  );
  if (setup.kind === "refused") {
    logger.info("refused Messages request: {message}", { message: setup.message });
    return errorReply("messages", setup.status, setup.message);
  }
  const { request, inputTokens } = setup;
  logger.with({ turn: request.id }).info(
    "messages turn: model={model} stream={stream} tools={tools} continuation={continuation} " +
      "traffic={traffic}",
    {
      model: request.model,
      stream: parsed.stream === true,
      tools: request.tools.length,
      continuation: request.continuation,
      traffic: describeTraffic(request.traffic),
    },
  );
  return parsed.stream === true
    ? streamReply(deps, c, request, inputTokens)
    : await jsonReply(deps, c, request, inputTokens);
}

export const createMessagesHandler: ProtocolFactory = (deps) => async (c, body) => {
  const parsed = MessagesRequestSchema.safeParse(body);
  if (!parsed.success) {
    const invalid = describeInvalid(parsed.error, body);
    logger.info("rejected Messages request: {message}", { message: invalid.message });
    return errorReply("messages", 400, invalid.message);
  }
  try {
    return await handle(deps, c, parsed.data, body);
  } catch (error) {
    if (c.req.raw.signal.aborted) {
      // Nobody is left to read a reply, and a client hanging up is not a gateway failure.
      logger.info("Messages request ended: client went away ({error})", { error: String(error) });
      return new Response(null, { status: 499 }); // "client closed request", as nginx logs it
    }
    logger.error("Messages request failed: {error}", { error: String(error) });
    return errorReply("messages", 500, TURN_FAILED);
  }
};
