/** POST /v1/responses: validate the body, run an answer-only council turn, reply as JSON or SSE. */
import { getLogger } from "@logtape/logtape";
import type { Context } from "hono";
import { systemClock } from "../../base/clock.ts";
import { describeTraffic } from "../../council/request/housekeeping.ts";
import type { TurnRequest } from "../../council/types.ts";
import { hostCredentials, OPENAI_CREDENTIALS } from "../credentials.ts";
import type { ProtocolDeps, ProtocolFactory } from "../protocol_handler.ts";
import { newId } from "../ids.ts";
import { describeInvalid } from "../invalid.ts";
import { setUpTurn } from "../turn_setup.ts";
import { streamTurn, TURN_FAILED } from "../stream_turn.ts";
import { collectTurn } from "../consume_turn.ts";
import {
  answerText,
  answerTokens,
  messageItem,
  type ResponseHead,
  responseObject,
  responsesUsage,
} from "./reply.ts";
import { type ResponsesRequest, ResponsesRequestSchema, responsesTurnInput } from "./request.ts";
import { responsesHints } from "./hints.ts";
import { errorReply } from "../error_envelope.ts";
import { ResponsesStream } from "./stream.ts";

const logger = getLogger(["council-gateway", "responses"]);

async function jsonReply(
  deps: ProtocolDeps,
  c: Context,
  request: TurnRequest,
  head: ResponseHead,
  inputTokens: number,
): Promise<Response> {
  // A turn where no agent produced anything is a completed answer explaining why, as on the
  // Messages side: a failed response only makes Codex retry the whole council.
  const { outcome, usage } = await collectTurn(deps.runTurn, request, c.req.raw.signal);
  return c.json(responseObject(
    head,
    "completed",
    [messageItem(newId("msg_"), answerText(outcome), "completed")],
    responsesUsage(inputTokens, answerTokens(outcome, usage)),
  ));
}

async function handle(
  deps: ProtocolDeps,
  c: Context,
  parsed: ResponsesRequest,
  body: unknown,
): Promise<Response> {
  const credentials = hostCredentials(c.req.raw.headers, OPENAI_CREDENTIALS, deps);
  const hints = responsesHints(c.req.raw.headers, body);
  const setup = await setUpTurn(
    deps,
    responsesTurnInput(parsed, credentials, hints),
    c.req.raw.signal,
  );
  if (setup.kind === "refused") {
    logger.info("refused Responses request: {message}", { message: setup.message });
    const code = setup.status === 413 ? "request_too_large" : "invalid_value";
    return errorReply("responses", setup.status, setup.message, { param: "input", code });
  }
  const { request, inputTokens } = setup;
  const head: ResponseHead = {
    id: newId("resp_"),
    model: request.model,
    createdAt: Math.floor((deps.clock ?? systemClock).now() / 1000),
    instructions: parsed.instructions ?? null,
  };
  const log = logger.with({ turn: request.id });
  log.info(
    "responses turn: model={model} stream={stream} continuation={continuation} traffic={traffic}",
    {
      model: request.model,
      stream: parsed.stream === true,
      continuation: request.continuation,
      traffic: describeTraffic(request.traffic),
    },
  );
  if (parsed.stream !== true) return await jsonReply(deps, c, request, head, inputTokens);
  return streamTurn({
    runTurn: deps.runTurn,
    request,
    renderer: new ResponsesStream({ head, inputTokens, progress: deps.streamProgress }),
    keepAliveMs: deps.keepAliveMs,
    clock: deps.clock,
    requestSignal: c.req.raw.signal,
    log,
  });
}

export const createResponsesHandler: ProtocolFactory = (deps) => async (c, body) => {
  const parsed = ResponsesRequestSchema.safeParse(body);
  if (!parsed.success) {
    const invalid = describeInvalid(parsed.error, body);
    logger.info("rejected Responses request: {message}", { message: invalid.message });
    const code = invalid.missing ? "missing_required_parameter" : "invalid_value";
    return errorReply("responses", 400, invalid.message, { param: invalid.param || null, code });
  }
  try {
    return await handle(deps, c, parsed.data, body);
  } catch (error) {
    if (c.req.raw.signal.aborted) {
      // Nobody is left to read a reply, and a client hanging up is not a gateway failure.
      logger.info("Responses request ended: client went away ({error})", { error: String(error) });
      return new Response(null, { status: 499 }); // "client closed request", as nginx logs it
    }
    logger.error("Responses request failed: {error}", { error: String(error) });
    return errorReply("responses", 500, TURN_FAILED);
  }
};
