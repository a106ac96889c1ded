/**
 * Options shared by the HTTP provider gateways, and their validation.
 *
 * @module
 */
import type { Capabilities, GatewayInfo } from "../../src/provider/gateway.ts";
import { FloretError } from "../../src/errors.ts";
import { capabilitiesWithModelInfo } from "../../src/provider/model_catalog.ts";

/**
 * How to reach a provider over HTTP. Every gateway in `@floret/engine/openai`
 * and `@floret/engine/anthropic` takes these; SDK retries are always off and
 * SDK timeouts effectively off, because the engine owns both.
 */
export interface HttpGatewayOptions {
  /** The model name the provider expects, e.g. `gpt-4.1-mini`. */
  model: string;
  /** The API key; when absent, the provider's usual environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). */
  apiKey?: string | undefined;
  /** Another endpoint speaking the same protocol (proxies, compatible providers). */
  baseURL?: string | undefined;
  /** A fetch to use instead of the global one (proxies, recorded replies in tests). */
  fetch?: typeof globalThis.fetch | undefined;
  /** What the model can do; unknown fields mean "not known". */
  capabilities?: Capabilities | undefined;
  /** Identifies whether opaque provider state can be reused; defaults to provider:model:protocol. */
  stateKey?: string | undefined;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /**
   * Extra top-level request fields merged into every request body (e.g.
   * `temperature`, `reasoning`, `thinking`), for what the gateway does not model.
   * Fields the gateway renders itself win.
   */
  extraBody?: Record<string, unknown> | undefined;
  /**
   * Use the provider's prompt cache (default `true`): Anthropic gets
   * `cache_control` breakpoints on the system prompt, the tool list and the
   * newest message; OpenAI gets a `prompt_cache_key` per thread. Cached input
   * is reported as `cacheReadTokens` / `cacheWriteTokens` in usage.
   */
  promptCache?: boolean | undefined;
}

/**
 * The longest timer every runtime accepts (2^31 − 1 ms, about 24.8 days).
 * Larger values overflow to an immediate timeout in Node, so "no SDK timeout"
 * is spelled as this.
 */
export const NO_SDK_TIMEOUT_MS = 2_147_483_647;

/**
 * Validates the shared options before any I/O and derives the gateway info.
 *
 * @param options what the host passed
 * @param provider provider name for `info.provider`
 * @param protocol wire protocol, the last part of the default state key
 * @returns the gateway's info
 * @throws {FloretError} `invalid_input` when an option has the wrong shape
 */
export function resolveGatewayInfo(
  options: HttpGatewayOptions,
  provider: string,
  protocol: string,
): GatewayInfo {
  if (typeof options !== "object" || options === null) {
    throw new FloretError("invalid_input", "Gateway options must be an object");
  }
  if (typeof options.model !== "string" || options.model.trim() === "") {
    throw new FloretError("invalid_input", "Gateway model must be a non-empty string");
  }
  if (options.apiKey !== undefined && typeof options.apiKey !== "string") {
    throw new FloretError("invalid_input", "Gateway apiKey must be a string");
  }
  if (options.baseURL !== undefined) {
    try {
      new URL(options.baseURL);
    } catch (cause) {
      throw new FloretError("invalid_input", `Gateway baseURL is not a URL: ${options.baseURL}`, {
        cause,
      });
    }
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new FloretError("invalid_input", "Gateway fetch must be a function");
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (typeof value !== "string") {
      throw new FloretError("invalid_input", `Gateway header must be a string: ${name}`);
    }
  }
  if (options.promptCache !== undefined && typeof options.promptCache !== "boolean") {
    throw new FloretError("invalid_input", "Gateway promptCache must be a boolean");
  }
  if (options.stateKey !== undefined && typeof options.stateKey !== "string") {
    throw new FloretError("invalid_input", "Gateway stateKey must be a string");
  }
  return {
    provider,
    model: options.model,
    stateKey: options.stateKey ?? `${provider}:${options.model}:${protocol}`,
    // Missing capabilities come from the offline model catalog; the host's win.
    capabilities: capabilitiesWithModelInfo(provider, options.model, options.capabilities),
  };
}
