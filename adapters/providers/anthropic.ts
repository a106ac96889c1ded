/**
 * The Anthropic Messages gateway. Loads `@anthropic-ai/sdk`; the engine's main
 * entry does not.
 *
 * @example
 * ```ts
 * import { anthropicMessages } from "@floret/engine/anthropic";
 * const gateway = anthropicMessages({ model: "claude-sonnet-5-5", maxTokens: 2048 });
 * console.log(gateway.info.provider); // "anthropic"
 * ```
 *
 * @module
 */
export { anthropicMessages } from "./anthropic_messages.ts";
export type { AnthropicMessagesOptions } from "./anthropic_messages.ts";
export type { HostedTool, HostedToolsOption } from "./hosted_tools.ts";
export type { HttpGatewayOptions } from "./http_options.ts";

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR).
export type * from "./gateway_types.ts";
