/**
 * Builds the `openai` SDK client for one attempt, with the engine's rules:
 * no SDK retries, no SDK timeout, the host's fetch wrapped for diagnostics.
 *
 * @module
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAI } from "openai";
import type { HttpGatewayOptions } from "./http_options.ts";
import { NO_SDK_TIMEOUT_MS } from "./http_options.ts";
import type { SdkApiError, SdkErrorTypes } from "./provider_errors.ts";

/**
 * Creates a client for one attempt. A client per attempt keeps the captured
 * response of concurrent attempts apart; constructing one does no I/O.
 *
 * @param options the gateway options
 * @param fetch the attempt's capturing fetch
 * @returns the SDK client
 */
export function openAIClient(options: HttpGatewayOptions, fetch: typeof globalThis.fetch): OpenAI {
  return new OpenAI({
    // The SDK throws at construction without a key; a placeholder lets
    // keyless compatible servers (local models) work and fails upstream with a 401 otherwise.
    apiKey: options.apiKey ?? readEnvKey() ?? "missing-api-key",
    baseURL: options.baseURL,
    fetch,
    maxRetries: 0,
    timeout: NO_SDK_TIMEOUT_MS,
    defaultHeaders: options.headers,
    logLevel: "off",
  });
}

function readEnvKey(): string | undefined {
  // Reached through globalThis so the module stays free of runtime-specific globals.
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  return env?.OPENAI_API_KEY;
}

/** How to recognise `openai` SDK errors. */
export const openAIErrors: SdkErrorTypes = {
  isApiError: (error: unknown): error is SdkApiError => error instanceof APIError,
  isTimeout: (error: unknown): boolean => error instanceof APIConnectionTimeoutError,
  isConnection: (error: unknown): boolean =>
    error instanceof APIConnectionError && !(error instanceof APIConnectionTimeoutError),
};
