/**
 * Renders a {@link ProviderRequest} as an Anthropic Messages request body.
 *
 * @module
 */
import type { HostedTool } from "./hosted_tools.ts";
import type { Capabilities, ProviderMessage, ProviderRequest } from "../../src/provider/gateway.ts";
import { userImages } from "./user_images.ts";
import { anthropicThinking } from "./reasoning_effort.ts";
import { thinkingToReplay } from "./anthropic_state.ts";
import type { ThinkingBlockWire } from "./anthropic_state.ts";
import { type CacheControl, markCacheBreakpoints } from "./anthropic_cache.ts";

/** A content block (the subset this gateway sends). */
export type AnthropicWireBlock =
  | { type: "text"; text: string; cache_control?: CacheControl }
  | {
    type: "image";
    source: { type: "base64"; media_type: string; data: string };
    cache_control?: CacheControl;
  }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
    cache_control?: CacheControl;
  }
  | {
    type: "tool_result";
    tool_use_id: string;
    content: string;
    is_error?: true;
    cache_control?: CacheControl;
  }
  | ThinkingBlockWire;

/** One message. */
export interface AnthropicWireMessage {
  /** Who speaks. */
  role: "user" | "assistant";
  /** Content blocks. */
  content: AnthropicWireBlock[];
}

/** The request body this gateway sends. */
export interface AnthropicWireRequest {
  /** Model name. */
  model: string;
  /** Required by the API. */
  max_tokens: number;
  /** System prompt(s), joined; a block with a cache breakpoint when caching is on. */
  system?: string | { type: "text"; text: string; cache_control?: CacheControl }[];
  /** The conversation, roles alternating. */
  messages: AnthropicWireMessage[];
  /** Tools: the host's, then the server tools (web search). */
  tools?: ({
    name: string;
    description: string;
    input_schema: Record<string, unknown>;
    cache_control?: CacheControl;
  } | {
    type: "web_search_20250305";
    name: "web_search";
    max_uses?: number;
    cache_control?: CacheControl;
  })[];
  /** Always streamed. */
  stream: true;
  /** Fields from `extraBody` (e.g. `thinking`). */
  [extra: string]: unknown;
}

/** What the renderer needs besides the request. */
export interface AnthropicRenderOptions {
  /** Model name. */
  model: string;
  /** State key: only state with this key is replayed. */
  stateKey: string;
  /** Capabilities (images, output size). */
  capabilities: Capabilities;
  /** Output budget when the request sets none. */
  maxTokens?: number;
  /** Extra body fields. */
  extraBody?: Record<string, unknown>;
  /** Mark prompt-cache breakpoints (default true). */
  promptCache?: boolean;
  /** Tools Anthropic runs itself (its web search). */
  hostedTools?: HostedTool[];
}

/** The output budget when neither the request, the options nor the capabilities give one. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * Renders the request. Consecutive messages of one role are merged, so tool
 * results and a following user message share one user turn.
 *
 * @param request the frozen provider request
 * @param options model, state key and capabilities
 * @returns the JSON body
 * @throws {FloretError} `invalid_input` for attachments the model cannot take
 */
export function renderAnthropicRequest(
  request: ProviderRequest,
  options: AnthropicRenderOptions,
): AnthropicWireRequest {
  const system: string[] = [];
  const messages: AnthropicWireMessage[] = [];
  const append = (role: "user" | "assistant", content: AnthropicWireBlock[]): void => {
    if (content.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };
  for (const message of request.messages) {
    if (message.role === "system") system.push(message.text);
    else {append(
        message.role === "assistant" ? "assistant" : "user",
        renderBlocks(message, options),
      );}
  }
  const body: AnthropicWireRequest = {
    ...options.extraBody,
    model: options.model,
    max_tokens: request.maxOutputTokens ?? options.maxTokens ??
      options.capabilities.maxOutputTokens ??
      DEFAULT_MAX_TOKENS,
    messages,
    stream: true,
  };
  if (request.reasoning) {
    const { thinking, maxTokens } = anthropicThinking(
      request.reasoning.effort,
      body.max_tokens,
      options.capabilities.maxOutputTokens,
    );
    body.thinking = thinking;
    body.max_tokens = maxTokens;
  }
  if (system.length > 0) body.system = system.join("\n\n");
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
    }));
  }
  for (const tool of options.hostedTools ?? []) {
    const search: NonNullable<AnthropicWireRequest["tools"]>[number] = {
      type: "web_search_20250305",
      name: "web_search",
    };
    if (tool.maxUses !== undefined) search.max_uses = tool.maxUses;
    (body.tools ??= []).push(search);
  }
  if (options.promptCache !== false) markCacheBreakpoints(body);
  return body;
}

function renderBlocks(
  message: ProviderMessage,
  options: AnthropicRenderOptions,
): AnthropicWireBlock[] {
  switch (message.role) {
    case "system":
      return [{ type: "text", text: message.text }];
    case "user": {
      const blocks: AnthropicWireBlock[] = userImages(message.attachments, options.capabilities)
        .map((image) => ({
          type: "image",
          source: { type: "base64", media_type: image.mediaType, data: image.dataBase64 },
        }));
      if (message.text !== "" || blocks.length === 0) {
        blocks.push({ type: "text", text: message.text });
      }
      return blocks;
    }
    case "assistant": {
      // Signed thinking must come first, exactly as it was produced.
      const blocks: AnthropicWireBlock[] = [...thinkingToReplay(message.state, options.stateKey)];
      if (message.text !== "") blocks.push({ type: "text", text: message.text });
      for (const call of message.toolCalls ?? []) {
        blocks.push({
          type: "tool_use",
          id: call.callId,
          name: call.name,
          input: toolInput(call.arguments),
        });
      }
      return blocks;
    }
    case "tool": {
      const block: AnthropicWireBlock = {
        type: "tool_result",
        tool_use_id: message.callId,
        content: message.output,
      };
      if (message.isError) block.is_error = true;
      return [block];
    }
    default: {
      const never: never = message;
      return never;
    }
  }
}

/**
 * Anthropic takes tool input as an object. Arguments that are not a JSON
 * object (the engine replays invalid calls with their validation error) are
 * sent as an empty object; the tool result explains what was wrong.
 */
function toolInput(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : {};
  } catch {
    return {};
  }
}
