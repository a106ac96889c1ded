/**
 * A gateway for the Anthropic Messages API.
 *
 * @module
 */
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import type {
  Gateway,
  GatewayInfo,
  ProviderEvent,
  ProviderRequest,
} from "../../src/provider/gateway.ts";
import type { HttpGatewayOptions } from "./http_options.ts";
import { NO_SDK_TIMEOUT_MS, resolveGatewayInfo } from "./http_options.ts";
import { resolveApiKey } from "./api_key.ts";
import { checkHostedTools, type HostedTool, type HostedToolsOption } from "./hosted_tools.ts";
import { capturingFetch } from "./http_capture.ts";
import { ANTHROPIC_REASONING_LEVELS, defaultReasoningLevels } from "./reasoning_effort.ts";
import { DEFAULT_MAX_TOKENS, renderAnthropicRequest } from "./anthropic_request.ts";
import { AnthropicEventParser } from "./anthropic_events.ts";
import { toProviderError } from "./provider_errors.ts";
import type { SdkApiError, SdkErrorTypes } from "./provider_errors.ts";
import { parsedEvents } from "./abortable.ts";
import { untilAborted } from "../../src/tools/until_aborted.ts";
import { FloretError } from "../../src/errors.ts";
import { optionalPeer } from "../../src/optional_peer.ts";

/** Options of {@link anthropicMessages}. */
export type AnthropicMessagesOptions = HttpGatewayOptions & HostedToolsOption & {
  /** Output budget when the request sets none (the API requires one); default: capabilities, then 4096. */
  maxTokens?: number | undefined;
};

// An optional peer: the gateway's first request reports a missing package
// (as a non-retryable gateway failure) instead of the entry's import failing.
const loadAnthropic = optionalPeer({
  package: "@anthropic-ai/sdk",
  entry: "@floret/engine/anthropic",
  load: () => import("@anthropic-ai/sdk"),
});

function anthropicErrors(sdk: typeof import("@anthropic-ai/sdk")): SdkErrorTypes {
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk;
  return {
    isApiError: (error: unknown): error is SdkApiError => error instanceof APIError,
    isTimeout: (error: unknown): boolean => error instanceof APIConnectionTimeoutError,
    isConnection: (error: unknown): boolean =>
      error instanceof APIConnectionError && !(error instanceof APIConnectionTimeoutError),
  };
}

/**
 * Creates a gateway for Anthropic Messages. Streams text, tool use and
 * thinking; signed thinking blocks come back in `finish.state` and are
 * replayed from the assistant message's `state`. Enable thinking with
 * `extraBody: { thinking: { type: "adaptive" } }`. With `hostedTools: [{ type:
 * "web_search", maxUses: 3 }]` Claude may search the web on Anthropic's side:
 * each search is a tool item with `tool.hosted: true` and its query, and the
 * text's web citations become `sources` on the assistant item.
 *
 * @example
 * ```ts
 * import { anthropicMessages } from "@floret/engine/anthropic";
 * const gateway = anthropicMessages({ model: "claude-sonnet-5-5", apiKey: "sk-ant-…" });
 * console.log(gateway.info.stateKey); // "anthropic:claude-sonnet-5-5:messages"
 * ```
 *
 * @param options model, credentials, endpoint, capabilities and default output budget
 * @returns the gateway
 * @throws {FloretError} `invalid_input` for malformed options
 */
export function anthropicMessages(input: AnthropicMessagesOptions): Gateway {
  const info = resolveGatewayInfo(input, "anthropic", "messages");
  defaultReasoningLevels(info.capabilities, ANTHROPIC_REASONING_LEVELS);
  const apiKey = resolveApiKey(input.apiKey, "ANTHROPIC_API_KEY", "anthropicMessages");
  const options = { ...input, apiKey };
  if (
    options.maxTokens !== undefined &&
    !(Number.isInteger(options.maxTokens) && options.maxTokens > 0)
  ) {
    throw new FloretError(
      "invalid_input",
      `Gateway maxTokens must be a positive integer: ${options.maxTokens}`,
    );
  }
  const hosted = checkHostedTools(options.hostedTools);
  return {
    info,
    stream: (request, { signal }) => streamMessages(options, info, request, signal, hosted),
  };
}

async function* streamMessages(
  options: AnthropicMessagesOptions,
  info: GatewayInfo,
  request: ProviderRequest,
  signal: AbortSignal,
  hosted: HostedTool[],
): AsyncGenerator<ProviderEvent, void, undefined> {
  const body = renderAnthropicRequest(request, {
    hostedTools: hosted,
    model: info.model,
    stateKey: info.stateKey,
    capabilities: info.capabilities,
    // The default budget follows what the host declared, not the catalog's
    // cap: a 128K default would reserve rate limit on every request.
    maxTokens: options.maxTokens ?? options.capabilities?.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
    extraBody: options.extraBody,
    promptCache: options.promptCache,
  });
  // Outside the try: a missing package is a set-up error, not a provider failure to classify.
  const sdk = await loadAnthropic();
  // A client per attempt keeps the captured responses of concurrent attempts apart.
  const capture = capturingFetch(options.fetch);
  try {
    const client = new sdk.Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      fetch: capture.fetch,
      maxRetries: 0,
      timeout: NO_SDK_TIMEOUT_MS,
      defaultHeaders: options.headers,
      logLevel: "off",
    });
    // Our renderer owns the wire shape; the SDK types are stricter than the API.
    const params = body as unknown as MessageCreateParamsStreaming;
    const stream = await untilAborted(client.messages.create(params, { signal }), signal);
    const parser = new AnthropicEventParser(info.stateKey);
    yield* parsedEvents(stream, parser, signal);
  } catch (error) {
    throw toProviderError(error, {
      signal,
      apiKey: options.apiKey,
      capture: capture.last,
      sdk: anthropicErrors(sdk),
      label: "Anthropic",
    });
  }
}
