/**
 * Renders a {@link ProviderRequest} as an OpenAI Responses API request body.
 *
 * @module
 */
import type { Capabilities, ProviderMessage, ProviderRequest } from "../../src/provider/gateway.ts";
import { imageDataUrl, userImages } from "./user_images.ts";
import { openAIEffort } from "./reasoning_effort.ts";
import { reasoningToReplay } from "./openai_responses_state.ts";
import type { HostedTool } from "./hosted_tools.ts";
import type { ReplayItemWire } from "./openai_responses_state.ts";

/** One input item (the subset this gateway sends). */
export type ResponsesWireItem =
  | { role: "system" | "assistant"; content: string }
  | { role: "user"; content: string | ResponsesWireUserPart[] }
  | ReplayItemWire
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

/** A part of a user message with images. */
export type ResponsesWireUserPart =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "auto" };

/** The request body this gateway sends. */
export interface ResponsesWireRequest {
  /** Model name. */
  model: string;
  /** The conversation as input items. */
  input: ResponsesWireItem[];
  /** Function tools, then hosted tools. */
  tools?: ({
    type: "function";
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    strict: false;
  } | { type: "web_search" })[];
  /** Output budget. */
  max_output_tokens?: number;
  /** Always streamed. */
  stream: true;
  /** The engine keeps the history, so nothing is stored server-side. */
  store: false;
  /** Asks for encrypted reasoning, so it can be replayed without `store`. */
  include?: string[];
  /** Routes requests of one conversation to the same prompt cache. */
  prompt_cache_key?: string;
  /** Fields from `extraBody`. */
  [extra: string]: unknown;
}

/** What the renderer needs besides the request. */
export interface ResponsesRenderOptions {
  /** Model name. */
  model: string;
  /** State key: only state with this key is replayed. */
  stateKey: string;
  /** Capabilities (images, reasoning). */
  capabilities: Capabilities;
  /** Extra body fields. */
  extraBody?: Record<string, unknown>;
  /** Send the request's cache key as `prompt_cache_key` (default true). */
  promptCache?: boolean;
  /** Tools OpenAI runs itself (its web search). */
  hostedTools?: HostedTool[];
}

/**
 * Renders the request.
 *
 * @param request the frozen provider request
 * @param options model, state key and capabilities
 * @returns the JSON body
 * @throws {FloretError} `invalid_input` for attachments the model cannot take
 */
export function renderResponsesRequest(
  request: ProviderRequest,
  options: ResponsesRenderOptions,
): ResponsesWireRequest {
  const body: ResponsesWireRequest = {
    ...options.extraBody,
    model: options.model,
    input: request.messages.flatMap((message) => renderMessage(message, options)),
    stream: true,
    store: false,
  };
  if (wantsEncryptedReasoning(options)) body.include = ["reasoning.encrypted_content"];
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    }));
  }
  if (options.hostedTools?.length) {
    body.tools = [
      ...body.tools ?? [],
      ...options.hostedTools.map((tool) => ({ type: tool.type })),
    ];
  }
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (request.reasoning) {
    // Kept: other reasoning fields the host set in extraBody (e.g. `summary`).
    const extra = options.extraBody?.reasoning;
    body.reasoning = {
      ...(typeof extra === "object" && extra !== null ? extra : {}),
      effort: openAIEffort(request.reasoning.effort),
    };
  }
  if (options.promptCache !== false && request.cacheKey) body.prompt_cache_key = request.cacheKey;
  return body;
}

function renderMessage(
  message: ProviderMessage,
  options: ResponsesRenderOptions,
): ResponsesWireItem[] {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: message.text }];
    case "user": {
      const images = userImages(message.attachments, options.capabilities);
      if (images.length === 0) return [{ role: "user", content: message.text }];
      const parts: ResponsesWireUserPart[] = message.text === ""
        ? []
        : [{ type: "input_text", text: message.text }];
      for (const image of images) {
        parts.push({ type: "input_image", image_url: imageDataUrl(image), detail: "auto" });
      }
      return [{ role: "user", content: parts }];
    }
    case "assistant": {
      // Reasoning items must precede the output they led to, as in the original response.
      const items: ResponsesWireItem[] = [...reasoningToReplay(message.state, options.stateKey)];
      if (message.text !== "") items.push({ role: "assistant", content: message.text });
      for (const call of message.toolCalls ?? []) {
        items.push({
          type: "function_call",
          call_id: call.callId,
          name: call.name,
          arguments: call.arguments,
        });
      }
      return items;
    }
    case "tool":
      return [{ type: "function_call_output", call_id: message.callId, output: message.output }];
    default: {
      const never: never = message;
      return never;
    }
  }
}

// OpenAI's reasoning families; anything else is assumed not to reason unless
// capabilities say so.
const REASONING_MODEL = /^(o\d|gpt-[5-9])|codex/i;

/**
 * Whether to ask for encrypted reasoning. Without `store`, replaying a
 * reasoning item needs it, but models without reasoning reject the request
 * ("Encrypted content is not supported with this model"), so capabilities
 * decide and the model name is the fallback guess.
 */
function wantsEncryptedReasoning(options: ResponsesRenderOptions): boolean {
  const declared = options.capabilities.reasoning;
  if (declared !== undefined) return declared === "supported";
  return REASONING_MODEL.test(options.model);
}
