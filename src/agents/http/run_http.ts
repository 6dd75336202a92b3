/**
 * One HTTP agent's run: the API adapter's request, streamed over the shared transport, its
 * events booked like a CLI's output. Nothing is started before the prompt.
 */
import type { AgentConfig, HttpRunner } from "../../config/mod.ts";
import type { PreparedRun, PrepareOptions } from "../types.ts";
import { HTTP_ADAPTERS } from "../adapters.ts";
import { pointsAtSelf } from "../child_env.ts";
import { apiKeyEnvOf, baseUrlOf } from "./http_api.ts";
import { redact } from "./upstream_errors.ts";
import { promptText } from "../prompt_text.ts";
import { streamCompletion, type StreamExit } from "./completion_stream.ts";
import {
  type RecorderSettings,
  type RunIdentity,
  type RunOutput,
  RunRecorder,
  seconds,
  unstartableRun,
} from "../run_output.ts";

/** What every HTTP run of one runner shares. */
export interface HttpSettings extends RecorderSettings {
  /** This gateway's own origins: a `baseUrl` pointing at one is refused. */
  selfOrigins(): string[];
  /** The gateway's environment (API keys are read from it). */
  gatewayEnv(): Record<string, string>;
  /** The wait before the one retry. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** A longer `retry-after` fails the run instead of being waited for. */
  maxRetryWaitMs: number;
  maxLineBytes: number;
}

/** Why an HTTP run failed (without the agent name), or undefined when it succeeded. */
function failureReason(
  exit: StreamExit,
  output: RunOutput,
  endMarker: string,
  timeoutMs: number,
  secret: string | undefined,
): string | undefined {
  if (exit.aborted) return "aborted";
  if (exit.timedOut) return `timed out after ${seconds(timeoutMs)}`;
  if (exit.error) return exit.error;
  if (output.final?.error) return redact(output.final.error, secret);
  if (!output.final) {
    const invalid = output.invalidLines
      ? `malformed stream: ${output.invalidLines} unparseable event(s), last: ${output.lastInvalid}; `
      : "";
    return `${invalid}stream ended without ${endMarker}`;
  }
  if (!output.answer.trim()) return "empty answer";
  return undefined;
}

/** An HTTP agent's run, checked now (base URL, key) and called on `run`. */
export function prepareHttp(
  settings: HttpSettings,
  agent: AgentConfig,
  runner: HttpRunner,
  options: PrepareOptions,
): PreparedRun {
  const id: RunIdentity = {
    agent: agent.name,
    model: options.model ?? agent.model,
    role: options.role,
  };
  const adapter = HTTP_ADAPTERS[runner];
  const baseUrl = baseUrlOf(agent, adapter);
  if (!baseUrl) return unstartableRun(settings, id, `runner "${agent.runner}" needs a \`baseUrl\``);
  if (pointsAtSelf("baseUrl", baseUrl, settings.selfOrigins())) {
    const reason = `baseUrl ${baseUrl} points at this gateway itself (refused: recursion)`;
    return unstartableRun(settings, id, reason);
  }
  const keyName = apiKeyEnvOf(agent, adapter);
  const env = settings.gatewayEnv();
  // The key is read from the gateway's own environment; `passApiKeys` is about CLI children.
  const apiKey = env[keyName] || undefined;
  if (!apiKey && adapter.keyRequired) {
    const reason = `${keyName} is not set in the gateway's environment (apiKeyEnv)`;
    return unstartableRun(settings, id, reason);
  }
  let used = false;
  return {
    agent: agent.name,
    async run(prompt, runOptions = {}) {
      if (used) {
        return unstartableRun(settings, id, "already run or discarded").run(prompt, runOptions);
      }
      used = true;
      const log = settings.logFor(runOptions.turnId);
      const recorder = new RunRecorder({
        ...settings,
        id,
        promptChars: promptText(prompt).length,
        log,
        onEvent: runOptions.onEvent,
      });
      if (runOptions.signal?.aborted) return recorder.fail("aborted before start", true);
      const request = adapter.request(agent, {
        model: id.model,
        prompt,
        attachments: options.attachments,
        apiKey,
      });
      const exit = await streamCompletion({
        adapter,
        request,
        secret: apiKey,
        agentName: agent.name,
        signal: runOptions.signal,
        timeoutMs: agent.timeoutMs,
        clock: settings.clock,
        sleep: settings.sleep,
        maxRetryWaitMs: settings.maxRetryWaitMs,
        maxEventBytes: settings.maxLineBytes,
        onStart: () => recorder.emit({ type: "started", agent: agent.name, model: id.model }),
        onItems: (items) => recorder.absorb(items),
      });
      return recorder.finish(
        { exitCode: null, timedOut: exit.timedOut, aborted: exit.aborted, droppedLines: 0 },
        failureReason(exit, recorder.output, adapter.endMarker, agent.timeoutMs, apiKey),
      );
    },
    discard() {
      used = true;
      return Promise.resolve();
    },
  };
}
