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
import { resolveApiKey } from "./api_key.ts";
import { checkHostedTools, type HostedTool, type HostedToolsOption } from "./hosted_tools.ts";
import { defaultReasoningLevels, OPENAI_REASONING_LEVELS } from "./reasoning_effort.ts";
import { loadOpenAISdk } from "./openai_client.ts";
import { capturingFetch } from "./http_capture.ts";
import { renderResponsesRequest } from "./openai_responses_request.ts";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import { ResponsesEventParser } from "./openai_responses_events.ts";
import { toProviderError } from "./provider_errors.ts";
import { parsedEvents } from "./abortable.ts";
import { untilAborted } from "../../src/tools/until_aborted.ts";

/**
 * Creates a gateway for the OpenAI Responses API. Requests are stateless
 * (`store: false`); reasoning items come back with encrypted content in
 * `finish.state`, and are replayed from the assistant message's `state`.
 * Reasoning summaries stream as `reasoning` events when asked for, e.g.
 * `extraBody: { reasoning: { effort: "low", summary: "auto" } }`. With
 * `hostedTools: [{ type: "web_search" }]` the model may search the web on
 * OpenAI's side: each search is a tool item with `tool.hosted: true` and its
 * query, and the answer's `url_citation` annotations become `sources`.
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
export function openAIResponses(input: OpenAIResponsesOptions): Gateway {
  const info = resolveGatewayInfo(input, "openai", "responses");
  defaultReasoningLevels(info.capabilities, OPENAI_REASONING_LEVELS);
  const apiKey = resolveApiKey(input.apiKey, "OPENAI_API_KEY", "openAIResponses");
  const options = { ...input, apiKey };
  const hosted = checkHostedTools(options.hostedTools);
  return {
    info,
    stream: (request, { signal }) => streamResponses(options, info, request, signal, hosted),
  };
}

/**
 * Options of {@link openAIResponses}: the HTTP options, and `hostedTools`
 * (`[{ type: "web_search" }]` lets the model search the web on OpenAI's side;
 * its calls show as tool items with `tool.hosted`, its citations as
 * `sources` on the assistant item).
 */
export type OpenAIResponsesOptions = HttpGatewayOptions & HostedToolsOption;

async function* streamResponses(
  options: HttpGatewayOptions,
  info: GatewayInfo,
  request: ProviderRequest,
  signal: AbortSignal,
  hosted: HostedTool[],
): AsyncGenerator<ProviderEvent, void, undefined> {
  const body = renderResponsesRequest(request, {
    hostedTools: hosted,
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
    yield* parsedEvents(stream, parser, signal);
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
