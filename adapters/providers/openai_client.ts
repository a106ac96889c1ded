/**
 * The `openai` SDK boundary: loads the package on first use and builds the
 * client for one attempt with the engine's rules (no SDK retries, no SDK
 * timeout, the host's fetch wrapped for diagnostics).
 *
 * @module
 */
import type { OpenAI } from "openai";
import { optionalPeer } from "../../src/optional_peer.ts";
import type { HttpGatewayOptions } from "./http_options.ts";
import { NO_SDK_TIMEOUT_MS } from "./http_options.ts";
import type { SdkApiError, SdkErrorTypes } from "./provider_errors.ts";

/** The loaded SDK, reduced to what the gateways use. */
export interface OpenAISdk {
  /**
   * Creates a client for one attempt. A client per attempt keeps the captured
   * response of concurrent attempts apart; constructing one does no I/O.
   */
  client(options: HttpGatewayOptions, fetch: typeof globalThis.fetch): OpenAI;
  /** How to recognise the SDK's errors. */
  errors: SdkErrorTypes;
}

// An optional peer: the gateway's first request reports a missing package
// (as a non-retryable gateway failure) instead of the entry's import failing.
const loadOpenAI = optionalPeer({
  package: "openai",
  entry: "@floret/engine/openai",
  load: () => import("openai"),
});

/**
 * Loads the `openai` package once per process.
 *
 * @returns the client factory and error recognisers
 * @throws {Error} naming the package and how to install it when it is missing
 */
export async function loadOpenAISdk(): Promise<OpenAISdk> {
  const { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAI } = await loadOpenAI();
  return {
    client: (options, fetch) =>
      new OpenAI({
        // The gateway settled the key at construction (api_key.ts).
        apiKey: options.apiKey,
        baseURL: options.baseURL,
        fetch,
        maxRetries: 0,
        timeout: NO_SDK_TIMEOUT_MS,
        defaultHeaders: options.headers,
        logLevel: "off",
      }),
    errors: {
      isApiError: (error: unknown): error is SdkApiError => error instanceof APIError,
      isTimeout: (error: unknown): boolean => error instanceof APIConnectionTimeoutError,
      isConnection: (error: unknown): boolean =>
        error instanceof APIConnectionError && !(error instanceof APIConnectionTimeoutError),
    },
  };
}
