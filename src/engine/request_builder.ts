/**
 * Builds and freezes one provider request: projects the history (from the
 * latest checkpoint on), estimates its size, adds the system prompt and
 * tools, and fingerprints the result. Retries of one
 * logical request reuse the frozen request, fingerprint included.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { canonicalJson } from "../identity/canonical_json.ts";
import { sha256HexSync } from "../_runtime.ts";
import { sha256Hex } from "../identity/fingerprint.ts";
import { type HistoryMessage, type HistoryReader, toHistory } from "../projection/history_model.ts";
import type { ProviderMessage, ProviderRequest, ProviderTool } from "../provider/gateway.ts";
import { implementationOf } from "../tools/define_tool.ts";
import { counterOf } from "../context/budget.ts";
import type { TokenCounter } from "../context/token_counter.ts";

interface AgentParts {
  system: HistoryMessage;
  tools: ProviderTool[];
  toolsJson: string;
  toolTokens: number;
}

// Agents are immutable, so their system message and tool schemas are rendered once.
const rendered = new WeakMap<Agent, AgentParts>();

function partsOf(agent: Agent): AgentParts {
  let parts = rendered.get(agent);
  if (!parts) {
    const tools: ProviderTool[] = [...agent.tools.values()].map((definition) => ({
      name: definition.name,
      description: definition.description,
      inputSchema: implementationOf(definition).inputJsonSchema,
    }));
    const toolsJson = canonicalJson(tools);
    parts = {
      system: toHistory({ role: "system", text: agent.systemPrompt }),
      tools,
      toolsJson,
      toolTokens: counterOf(agent).tools(tools),
    };
    rendered.set(agent, parts);
  }
  return parts;
}

/** The next request of a turn, projected but not yet frozen, with its token figures. */
export interface Projection {
  /** Every message after the system prompt. */
  messages: HistoryMessage[];
  /** The engine's estimate of the whole request: system prompt, tools, every message. */
  estimate: number;
  /** The estimate, raised to what the latest confirmed usage implies when that is more. */
  projected: number;
  /** System prompt, tools, the current user input and the supplemental context. */
  fixed: number;
  /** The agent's counter, which sized every figure here. */
  counter: TokenCounter;
}

/**
 * Projects the next request of a turn and estimates its size.
 *
 * @param agent the turn's agent
 * @param history the thread's provider history
 * @param supplemental the running turn's supplemental context message, if any
 * @returns the messages and their token figures
 */
export function projectRequest(
  agent: Agent,
  history: HistoryReader,
  supplemental?: HistoryMessage,
): Projection {
  const parts = partsOf(agent);
  const counter = counterOf(agent);
  const stateKey = stateKeyOf(agent);
  const messages = history.messages(stateKey, supplemental);
  // The settled exchanges' tokens are summed once (HistoryModel.settled); only
  // the messages after them are summed here, so the cost follows the turn.
  const settled = history.settled(stateKey, counter);
  const base = counter.requestOverhead + parts.system.tokensBy(counter) + parts.toolTokens;
  let estimate = base + settled.tokens;
  for (let i = settled.count; i < messages.length; i++) estimate += messages[i].tokensBy(counter);
  let projected = estimate;
  const confirmed = history.confirmed();
  if (confirmed) {
    const usage = confirmed.usage;
    let since = (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) +
      (usage.cacheWriteTokens ?? 0) + (usage.outputTokens ?? 0);
    // No settled message is newer than the confirmed step unless its seq says so.
    for (let i = confirmed.seq >= settled.maxSeq ? settled.count : 0; i < messages.length; i++) {
      const message = messages[i];
      if (message.seq !== undefined && message.seq > confirmed.seq) {
        since += message.tokensBy(counter);
      }
    }
    projected = Math.max(estimate, since);
  }
  const fixed = base + (history.currentInput()?.tokensBy(counter) ?? 0) +
    (supplemental?.tokensBy(counter) ?? 0);
  return { messages, estimate, projected, fixed, counter };
}

/** What a request's fingerprint is computed from, kept on the request until first read. */
interface FingerprintSource {
  parts: AgentParts;
  projected: readonly HistoryMessage[];
  maxOutputTokens: number | undefined;
  fingerprint: string | undefined;
}

/** Where a frozen request keeps its {@link FingerprintSource} (not enumerable). */
const SOURCE = Symbol("floret.fingerprintSource");

/**
 * The canonical JSON of `{ maxOutputTokens, messages, tools }`, assembled by
 * hand from cached pieces; equal to canonicalJson() of the same object (keys
 * in sorted order, undefined fields left out), which a test checks.
 */
function canonicalOf(source: FingerprintSource): string {
  let json = "{";
  if (source.maxOutputTokens !== undefined) {
    json += `"maxOutputTokens":${canonicalJson(source.maxOutputTokens)},`;
  }
  json += `"messages":[${source.parts.system.json}`;
  for (const message of source.projected) json += "," + message.json;
  return json + `],"tools":${source.parts.toolsJson}}`;
}

/**
 * The `fingerprint` getter every frozen request shares: computed on first
 * read, once. One function for all requests (not a closure per request), so
 * requests share their hidden class and `defineProperty` stays cheap.
 */
function lazyFingerprint(this: ProviderRequest): string {
  const source = (this as unknown as { [SOURCE]: FingerprintSource })[SOURCE];
  return (source.fingerprint ??= sha256HexSync!(canonicalOf(source)));
}

/** The descriptor of every frozen request's `fingerprint` (one object, not one per request). */
const FINGERPRINT: PropertyDescriptor = { enumerable: true, get: lazyFingerprint };

/**
 * Freezes a projected request with its fingerprint: SHA-256 hex of the
 * canonical JSON of `{ messages, tools, maxOutputTokens }`. Where the runtime
 * hashes synchronously (most gateways never read the fingerprint) it is taken
 * on first read and the request comes back at once; otherwise it is hashed
 * now and the request comes back as a promise.
 *
 * @param agent the turn's agent
 * @param projected the messages after the system prompt
 * @param threadId the thread, whose id becomes the request's prompt-cache key
 * @param maxOutputTokens the output budget, if the request carries one
 * @param secrets answers messages with secret values, by interaction id: sent, never fingerprinted
 * @returns the frozen request, or a promise of it
 */
export function freezeRequest(
  agent: Agent,
  projected: readonly HistoryMessage[],
  threadId: string,
  maxOutputTokens: number | undefined,
  secrets?: ReadonlyMap<string, ProviderMessage>,
): ProviderRequest | Promise<ProviderRequest> {
  const parts = partsOf(agent);
  const messages = new Array(projected.length + 1);
  messages[0] = parts.system.message;
  for (let i = 0; i < projected.length; i++) messages[i + 1] = projected[i].message;
  if (secrets?.size) {
    for (let i = 0; i < projected.length; i++) {
      const id = projected[i].interactionId;
      const secret = id === undefined ? undefined : secrets.get(id);
      if (secret) messages[i + 1] = secret;
    }
  }
  const source: FingerprintSource = { parts, projected, maxOutputTokens, fingerprint: undefined };
  const request = { messages, tools: parts.tools } as ProviderRequest;
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  request.cacheKey = threadId;
  if (!sha256HexSync) {
    return sha256Hex(canonicalOf(source)).then((fingerprint) => {
      request.fingerprint = fingerprint;
      return Object.freeze(request);
    });
  }
  Object.defineProperty(request, SOURCE, { value: source });
  Object.defineProperty(request, "fingerprint", FINGERPRINT);
  return Object.freeze(request);
}

/**
 * The gateway's state key; a hand-written gateway may leave it out, and then
 * its state is replayed only to gateways that left it out too.
 *
 * @param agent the turn's agent
 * @returns the key, `""` when the gateway has none
 */
export function stateKeyOf(agent: Agent): string {
  const key = agent.gateway.info?.stateKey;
  return typeof key === "string" ? key : "";
}
