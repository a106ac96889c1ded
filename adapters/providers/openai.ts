/**
 * OpenAI gateways: Chat Completions (any compatible endpoint) and the
 * Responses API. Loads the `openai` SDK; the engine's main entry does not.
 *
 * @example
 * ```ts
 * import { openAIChat } from "@floret/engine/openai";
 * const gateway = openAIChat({ model: "deepseek-chat", provider: "deepseek", baseURL: "https://api.deepseek.com" });
 * console.log(gateway.info.provider); // "deepseek"
 * ```
 *
 * @module
 */
export { openAIChat } from "./openai_chat.ts";
export type { OpenAIChatOptions } from "./openai_chat.ts";
export { openAIResponses } from "./openai_responses.ts";
export type { OpenAIResponsesOptions } from "./openai_responses.ts";
export type { HostedTool, HostedToolsOption } from "./hosted_tools.ts";
export type { HttpGatewayOptions } from "./http_options.ts";

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR).
export type * from "./gateway_types.ts";
