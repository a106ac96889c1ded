/**
 * A gateway for any OpenAI-compatible Chat Completions endpoint.
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
import { defaultReasoningLevels, OPENAI_REASONING_LEVELS } from "./reasoning_effort.ts";
import { loadOpenAISdk } from "./openai_client.ts";
import { capturingFetch } from "./http_capture.ts";
import { renderChatRequest } from "./openai_chat_request.ts";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { ChatEventParser, completionAsChunk } from "./openai_chat_events.ts";
import { toProviderError } from "./provider_errors.ts";
import { abortable } from "./abortable.ts";
import { untilAborted } from "../../src/tools/until_aborted.ts";

/** Options of {@link openAIChat}. */
export type OpenAIChatOptions = HttpGatewayOptions & {
  /** Provider name for `info.provider` and the state key (e.g. `deepseek`); default `openai`. */
  provider?: string | undefined;
};

/**
 * Creates a gateway for OpenAI Chat Completions or any compatible endpoint
 * (DeepSeek, OpenRouter, vLLM, …) via `baseURL`. Streams with usage; tool
 * calls, `reasoning_content` and in-stream errors are normalised.
 *
 * @example
 * ```ts
 * import { openAIChat } from "@floret/engine/openai";
 * const gateway = openAIChat({ model: "gpt-4.1-mini", apiKey: "sk-…" });
 * console.log(gateway.info.stateKey); // "openai:gpt-4.1-mini:chat"
 * ```
 *
 * @param options model, credentials, endpoint and capabilities
 * @returns the gateway
 * @throws {FloretError} `invalid_input` for malformed options
 */
export function openAIChat(input: OpenAIChatOptions): Gateway {
  const info = resolveGatewayInfo(input, input?.provider ?? "openai", "chat");
  // Other servers speaking the protocol: which levels they take is not known.
  if (info.provider === "openai") {
    defaultReasoningLevels(info.capabilities, OPENAI_REASONING_LEVELS);
  }
  const options = { ...input, apiKey: resolveApiKey(input.apiKey, "OPENAI_API_KEY", "openAIChat") };
  return {
    info,
    stream: (request, { signal }) => streamChat(options, info, request, signal),
  };
}

async function* streamChat(
  options: OpenAIChatOptions,
  info: GatewayInfo,
  request: ProviderRequest,
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent, void, undefined> {
  const body = renderChatRequest(request, {
    model: info.model,
    provider: info.provider,
    capabilities: info.capabilities,
    extraBody: options.extraBody,
    promptCache: options.promptCache,
  });
  // Outside the try: a missing package is a set-up error, not a provider failure to classify.
  const sdk = await loadOpenAISdk();
  const capture = capturingFetch(options.fetch);
  const context = {
    signal,
    apiKey: options.apiKey,
    sdk: sdk.errors,
    label: labelOf(info.provider),
  };
  try {
    const client = sdk.client(options, capture.fetch);
    // The body carries provider-specific fields the SDK types do not list.
    const params = body as unknown as ChatCompletionCreateParamsStreaming;
    const { data, response } = await untilAborted(
      client.chat.completions.create(params, { signal }).withResponse(),
      signal,
    );
    const parser = new ChatEventParser();
    if (isJson(response)) {
      // Some compatible servers ignore `stream: true`; the SDK stream is never read then.
      yield* parser.push(completionAsChunk(await untilAborted(response.json(), signal)));
    } else {
      for await (const chunk of abortable(data, signal)) yield* parser.push(chunk);
    }
    if (signal.aborted) throw signal.reason;
    yield* parser.end();
  } catch (error) {
    throw toProviderError(error, { ...context, capture: capture.last });
  }
}

function isJson(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").includes("application/json");
}

function labelOf(provider: string): string {
  return provider === "openai" ? "OpenAI" : provider;
}
