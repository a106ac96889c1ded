/**
 * The Gateway contract: how the engine talks to a model provider. Gateways
 * stream normalised events; the engine owns retries, timeouts and state.
 *
 * @module
 */

/**
 * Token usage as the provider reported it, as disjoint counts: `inputTokens`
 * excludes cache reads and cache writes; `reasoningTokens` is the part of
 * `outputTokens` spent on reasoning.
 */
export interface Usage {
  /** Uncached input tokens. */
  inputTokens?: number;
  /** Output tokens, reasoning included. */
  outputTokens?: number;
  /** Input tokens served from the provider's cache. */
  cacheReadTokens?: number;
  /** Input tokens written to the provider's cache. */
  cacheWriteTokens?: number;
  /** The part of `outputTokens` spent on reasoning. */
  reasoningTokens?: number;
}

/**
 * How hard the model should think before it answers, from least to most.
 * Each gateway maps a level to its provider's own setting.
 */
export type ReasoningEffort = "minimal" | "low" | "medium" | "high" | "max";

/** Every reasoning level, from least to most. */
export const REASONING_EFFORTS: readonly ReasoningEffort[] = Object.freeze([
  "minimal",
  "low",
  "medium",
  "high",
  "max",
]);

/** What a model can do; unknown fields mean "not known". */
export interface Capabilities {
  /** Whether the model produces reasoning. */
  reasoning?: "unsupported" | "supported";
  /** Whether user messages may carry images. */
  images?: boolean;
  /** The context window in tokens. */
  contextWindowTokens?: number;
  /** The largest output the model may produce in one response. */
  maxOutputTokens?: number;
  /**
   * The reasoning levels this gateway can send; an agent asking for another
   * one is refused at `defineAgent`. Unknown (absent): any level is passed on.
   */
  reasoningLevels?: ReasoningEffort[];
  /** Whether user messages may carry images (the same as `images`, as model tables spell it). */
  imageInput?: boolean;
}

/**
 * An image attached to a user message, already prepared for a model (see
 * `prepareModelImage` in `@floret/engine/images`). Bytes travel as base64 so
 * the journal stays JSON.
 */
export interface ImageAttachment {
  /** Discriminator. */
  type: "image";
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  mediaType: string;
  /** The image bytes, base64 (standard alphabet, padded). */
  dataBase64: string;
  /** Optional name for people. */
  name?: string;
}

/** One message of the provider history the engine projects from the journal. */
export type ProviderMessage =
  | { role: "system"; text: string }
  | { role: "user"; text: string; attachments?: unknown[] }
  | {
    role: "assistant";
    text: string;
    reasoning?: string;
    toolCalls?: { callId: string; name: string; arguments: string }[];
    /**
     * Opaque state this gateway returned in `finish.state` for this message
     * (reasoning signatures, encrypted reasoning items); replayed only when
     * `stateKey` matches. The engine stores it with the assistant message and
     * fills it in when it projects the history; gateways ignore state they did
     * not produce.
     */
    state?: unknown;
  }
  | { role: "tool"; callId: string; name: string; output: string; isError?: boolean };

/** A tool as the model sees it. */
export interface ProviderTool {
  /** The tool's name. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

/** One frozen provider request. Retries of one logical request reuse it unchanged. */
export interface ProviderRequest {
  /** The conversation, system prompt first. */
  messages: ProviderMessage[];
  /** The tools offered. */
  tools: ProviderTool[];
  /** Output budget, when the engine sets one. */
  maxOutputTokens?: number;
  /** SHA-256 of the frozen request; retries of one logical request share it. */
  fingerprint: string;
  /**
   * Opaque provider state from earlier responses of the same `stateKey`
   * (reasoning signatures, encrypted reasoning items), keyed by the assistant
   * message index it belongs to; gateways define its shape. The built-in HTTP
   * gateways read the per-message `state` of assistant messages instead.
   */
  state?: unknown;
  /**
   * A stable key for one conversation (the engine derives it from the thread),
   * for providers whose prompt cache is routed by a key. It is not part of the
   * fingerprint: the same request with another key is the same request.
   */
  cacheKey?: string;
  /** The agent's reasoning effort, when it sets one; part of the fingerprint. */
  reasoning?: { effort: ReasoningEffort };
  /**
   * The run's labels (`send({ labels })`), for gateways that route or meter
   * by them. Never sent to a provider by the built-in gateways, and not part
   * of the fingerprint.
   */
  labels?: Record<string, string>;
}

/**
 * A tool the provider ran itself during the response (a hosted web search):
 * shown as a tool item with `tool.hosted: true`, never dispatched by the
 * engine and never sent back as a tool call.
 */
export interface HostedToolCall {
  /** The provider's id of the call (`ws_…`, `srvtoolu_…`). */
  callId: string;
  /** The hosted tool, e.g. `web_search`. */
  name: string;
  /** What it searched for, when the provider said. */
  query?: string;
  /** How it ended. */
  status: "completed" | "error";
  /** The pages it found, when the provider listed them. */
  results?: { url: string; title?: string; snippet?: string }[];
}

/**
 * A source the assistant text cites (from the provider's citations).
 * `start` and `end` are UTF-16 offsets into the step's text (the assistant
 * item's `text`), end exclusive, when the provider placed the citation.
 */
export interface CitedSource {
  /** The cited page. */
  url: string;
  /** Its title, when known. */
  title?: string;
  /** Where the citing text starts in the assistant text. */
  start?: number;
  /** Where it ends (exclusive). */
  end?: number;
}

/** A normalised streaming event. Exactly one `finish` ends a successful stream. */
export type ProviderEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string; signature?: string }
  | { type: "tool-call-start"; callId: string; name: string }
  | { type: "tool-call-delta"; callId: string; argumentsDelta: string }
  | { type: "tool-call-end"; callId: string }
  /** May come more than once; each carries the latest known value of the fields it sets. */
  | { type: "usage"; usage: Usage }
  | {
    type: "finish";
    reason: "stop" | "tool_calls" | "length" | "content_filter";
    state?: unknown;
    /** Calls the provider ran itself during the response (hosted search). */
    hosted?: HostedToolCall[];
    /** Citations of the response's text. */
    sources?: CitedSource[];
  };

/** Describes a gateway: who it talks to and what the model can do. */
export interface GatewayInfo {
  /** Provider name, e.g. `openai`. */
  provider: string;
  /** Model name. */
  model: string;
  /** Opaque state is replayed only to a gateway with the same key. */
  stateKey: string;
  /** What the model can do. */
  capabilities: Capabilities;
}

/** A model provider transport. Implementations throw `ProviderError`. */
export interface Gateway {
  /** Who this gateway talks to. */
  readonly info: GatewayInfo;
  /** Streams one attempt of a request; `signal` aborts it. */
  stream(request: ProviderRequest, options: { signal: AbortSignal }): AsyncIterable<ProviderEvent>;
}

/** The finish reasons a gateway may report. */
export type FinishReason = Extract<ProviderEvent, { type: "finish" }>["reason"];
