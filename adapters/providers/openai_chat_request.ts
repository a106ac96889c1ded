/**
 * Renders a {@link ProviderRequest} as an OpenAI Chat Completions request body.
 *
 * @module
 */
import type { Capabilities, ProviderMessage, ProviderRequest } from "../../src/provider/gateway.ts";
import { imageDataUrl, userImages } from "./user_images.ts";
import { openAIEffort } from "./reasoning_effort.ts";

/** One message in Chat Completions form (the subset this gateway sends). */
export type ChatWireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatWireUserPart[] }
  | {
    role: "assistant";
    content: string | null;
    reasoning_content?: string;
    tool_calls?: {
      id: string;
      type: "function";
      function: { name: string; arguments: string };
    }[];
  }
  | { role: "tool"; tool_call_id: string; content: string };

/** A part of a user message with images. */
export type ChatWireUserPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** The request body this gateway sends. */
export interface ChatWireRequest {
  /** Model name. */
  model: string;
  /** The conversation. */
  messages: ChatWireMessage[];
  /** Tools, when any are offered. */
  tools?: {
    type: "function";
    function: { name: string; description: string; parameters: Record<string, unknown> };
  }[];
  /** Always streamed. */
  stream: true;
  /** Asks for the final usage chunk. */
  stream_options: { include_usage: true };
  /** OpenAI's current output limit field. */
  max_completion_tokens?: number;
  /** The older field most compatible servers still read. */
  max_tokens?: number;
  /** Routes requests of one conversation to the same prompt cache (OpenAI only). */
  prompt_cache_key?: string;
  /** Fields from `extraBody`. */
  [extra: string]: unknown;
}

/** What the renderer needs besides the request. */
export interface ChatRenderOptions {
  /** Model name. */
  model: string;
  /** Provider name: `openai` uses `max_completion_tokens`, others `max_tokens`. */
  provider: string;
  /** Capabilities (images). */
  capabilities: Capabilities;
  /** Extra body fields. */
  extraBody?: Record<string, unknown>;
  /** Send the request's cache key as `prompt_cache_key` (default true; OpenAI only). */
  promptCache?: boolean;
}

/**
 * Renders the request.
 *
 * @param request the frozen provider request
 * @param options model, provider and capabilities
 * @returns the JSON body
 * @throws {FloretError} `invalid_input` for attachments the model cannot take
 */
export function renderChatRequest(
  request: ProviderRequest,
  options: ChatRenderOptions,
): ChatWireRequest {
  const body: ChatWireRequest = {
    ...options.extraBody,
    model: options.model,
    messages: request.messages.map((message) => renderMessage(message, options)),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
  }
  if (request.maxOutputTokens !== undefined) {
    if (options.provider === "openai") body.max_completion_tokens = request.maxOutputTokens;
    else body.max_tokens = request.maxOutputTokens;
  }
  if (request.reasoning) body.reasoning_effort = openAIEffort(request.reasoning.effort);
  // Compatible servers may refuse fields they do not know, so only OpenAI gets the key.
  if (options.provider === "openai" && options.promptCache !== false && request.cacheKey) {
    body.prompt_cache_key = request.cacheKey;
  }
  return body;
}

function renderMessage(message: ProviderMessage, options: ChatRenderOptions): ChatWireMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.text };
    case "user": {
      const images = userImages(message.attachments, options.capabilities);
      if (images.length === 0) return { role: "user", content: message.text };
      const parts: ChatWireUserPart[] = message.text === ""
        ? []
        : [{ type: "text", text: message.text }];
      for (const image of images) {
        parts.push({ type: "image_url", image_url: { url: imageDataUrl(image) } });
      }
      return { role: "user", content: parts };
    }
    case "assistant": {
      const calls = message.toolCalls ?? [];
      const out: ChatWireMessage = {
        role: "assistant",
        content: message.text === "" ? null : message.text,
      };
      if (calls.length > 0) {
        out.tool_calls = calls.map((call) => ({
          id: call.callId,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
        // DeepSeek's thinking mode wants its reasoning back within a tool loop;
        // other servers may reject the unknown field, so only DeepSeek gets it.
        if (options.provider === "deepseek" && message.reasoning) {
          out.reasoning_content = message.reasoning;
        }
      }
      return out;
    }
    case "tool":
      return { role: "tool", tool_call_id: message.callId, content: message.output };
    default: {
      const never: never = message;
      return never;
    }
  }
}
