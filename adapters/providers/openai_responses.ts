/**
 * A gateway for the OpenAI Responses API.
 *
 * @module
 */
import type {
  Gateway,
  GatewayInfo,
  ProviderEvent,
  ProviderRequest,
} from "../../src/provider/gateway.ts";
import type { HttpGatewayOptions } from "./http_options.ts";
import { resolveGatewayInfo } from "./http_options.ts";
import { defaultReasoningLevels, OPENAI_REASONING_LEVELS } from "./reasoning_effort.ts";
import { loadOpenAISdk } from "./openai_client.ts";
import { capturingFetch } from "./http_capture.ts";
import { renderResponsesRequest } from "./openai_responses_request.ts";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import { ResponsesEventParser } from "./openai_responses_events.ts";
import { toProviderError } from "./provider_errors.ts";
import { abortable } from "./abortable.ts";
import { untilAborted } from "../../src/tools/until_aborted.ts";

/**
 * Creates a gateway for the OpenAI Responses API. Requests are stateless
 * (`store: false`); reasoning items come back with encrypted content in
 * `finish.state`, and are replayed from the assistant message's `state`.
 * Reasoning summaries stream as `reasoning` events when asked for, e.g.
 * `extraBody: { reasoning: { effort: "low", summary: "auto" } }`.
 *
 * @example
 * ```ts
 * import { openAIResponses } from "@floret/engine/openai";
 * const gateway = openAIResponses({ model: "gpt-5-mini", apiKey: "sk-…" });
 * console.log(gateway.info.stateKey); // "openai:gpt-5-mini:responses"
 * ```
 *
 * @param options model, credentials, endpoint and capabilities
 * @returns the gateway
 * @throws {FloretError} `invalid_input` for malformed options
 */
export function openAIResponses(options: HttpGatewayOptions): Gateway {
  const info = resolveGatewayInfo(options, "openai", "responses");
  defaultReasoningLevels(info.capabilities, OPENAI_REASONING_LEVELS);
  return {
    info,
    stream: (request, { signal }) => streamResponses(options, info, request, signal),
  };
}

async function* streamResponses(
  options: HttpGatewayOptions,
  info: GatewayInfo,
  request: ProviderRequest,
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent, void, undefined> {
  const body = renderResponsesRequest(request, {
    model: info.model,
    stateKey: info.stateKey,
    capabilities: info.capabilities,
    extraBody: options.extraBody,
    promptCache: options.promptCache,
  });
  // Outside the try: a missing package is a set-up error, not a provider failure to classify.
  const sdk = await loadOpenAISdk();
  const capture = capturingFetch(options.fetch);
  try {
    const client = sdk.client(options, capture.fetch);
    // Our renderer owns the wire shape; the SDK types are stricter than the API.
    const params = body as unknown as ResponseCreateParamsStreaming;
    const stream = await untilAborted(client.responses.create(params, { signal }), signal);
    const parser = new ResponsesEventParser(info.stateKey);
    for await (const event of abortable(stream, signal)) {
      yield* parser.push(event);
      // Anything after the terminal event belongs to no response of ours.
      if (parser.done) break;
    }
    if (signal.aborted) throw signal.reason;
    parser.end();
  } catch (error) {
    throw toProviderError(error, {
      signal,
      apiKey: options.apiKey,
      capture: capture.last,
      sdk: sdk.errors,
      label: "OpenAI",
    });
  }
}
