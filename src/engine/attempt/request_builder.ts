/**
 * Builds and freezes one provider request: projects the history (from the
 * latest checkpoint on), estimates its size, adds the system prompt and
 * tools, and fingerprints the result. Retries of one
 * logical request reuse the frozen request, fingerprint included.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import { canonicalJson } from "../../identity/canonical_json.ts";
import { sha256HexSync } from "../../_runtime.ts";
import { sha256Hex } from "../../identity/fingerprint.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import {
  type HistoryMessage,
  listedMessages,
  type Listing,
  toHistory,
} from "../../projection/history/history_message.ts";
import type { ProviderMessage, ProviderRequest, ProviderTool } from "../../provider/gateway.ts";
import { implementationOf } from "../../tools/define_tool.ts";
import { counterOf } from "../../context/budget.ts";
import { recordedTools } from "../run/turn_surface.ts";
import type { TokenCounter } from "../../context/token_counter.ts";

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
    // A resumed turn tells the model what its admission recorded (see turn_surface.ts).
    const tools: ProviderTool[] = recordedTools(agent) ??
      [...agent.tools.values()].map((definition) => ({
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
  /** Every message after the system prompt (listed on first read: requests do not need it). */
  readonly messages: HistoryMessage[];
  /** The same messages as the history listed them: settled part and current exchange. */
  readonly listing: Listing;
  /** The engine's estimate of the whole request: system prompt, tools, every message. */
  estimate: number;
  /** The estimate, raised to what the latest confirmed usage implies when that is more. */
  projected: number;
  /** System prompt, tools, the current user input and the supplemental context. */
  fixed: number;
  /** The agent's counter, which sized every figure here. */
  counter: TokenCounter;
}

/** A {@link Projection} whose `messages` array is made only when read (by compaction). */
class ListedProjection implements Projection {
  readonly listing: Listing;
  estimate: number;
  projected: number;
  fixed: number;
  counter: TokenCounter;
  #messages: HistoryMessage[] | undefined;

  constructor(
    listing: Listing,
    estimate: number,
    projected: number,
    fixed: number,
    counter: TokenCounter,
  ) {
    this.listing = listing;
    this.estimate = estimate;
    this.projected = projected;
    this.fixed = fixed;
    this.counter = counter;
  }

  get messages(): HistoryMessage[] {
    return (this.#messages ??= listedMessages(this.listing));
  }
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
  const listing = history.listing(stateKey, supplemental);
  const tail = listing.tail;
  // The settled exchanges' tokens are summed once (HistoryModel.settled); only
  // the current exchange's messages are summed here, so the cost follows the turn.
  const settled = history.settled(stateKey, counter);
  const base = counter.requestOverhead + parts.system.tokensBy(counter) + parts.toolTokens;
  let estimate = base + settled.tokens;
  for (let i = settled.count; i < listing.count; i++) {
    estimate += listing.settled[i].tokensBy(counter);
  }
  const confirmed = history.confirmed();
  // The current exchange in one pass: each message counts toward the estimate,
  // and toward what the confirmed usage implies when an entry after it made the message.
  const confirmedSeq = confirmed ? confirmed.seq : Infinity;
  let newer = 0;
  for (let i = 0; i < tail.length; i++) {
    const message = tail[i];
    const tokens = message.tokensBy(counter);
    estimate += tokens;
    if (message.seq !== undefined && message.seq > confirmedSeq) newer += tokens;
  }
  let projected = estimate;
  if (confirmed) {
    const usage = confirmed.usage;
    let since = (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) +
      (usage.cacheWriteTokens ?? 0) + (usage.outputTokens ?? 0) + newer;
    // No settled message is newer than the confirmed step unless its seq says so.
    const from = confirmed.seq >= settled.maxSeq ? settled.count : 0;
    since += tokensAfter(listing.settled, from, listing.count, confirmed.seq, counter);
    projected = Math.max(estimate, since);
  }
  const fixed = base + (history.currentInput()?.tokensBy(counter) ?? 0) +
    (supplemental?.tokensBy(counter) ?? 0);
  return new ListedProjection(listing, estimate, projected, fixed, counter);
}

/** The tokens of `messages[from, to)` that a journal entry after `seq` made. */
function tokensAfter(
  messages: readonly HistoryMessage[],
  from: number,
  to: number,
  seq: number,
  counter: TokenCounter,
): number {
  let tokens = 0;
  for (let i = from; i < to; i++) {
    const message = messages[i];
    if (message.seq !== undefined && message.seq > seq) tokens += message.tokensBy(counter);
  }
  return tokens;
}

/** What a request's fingerprint is computed from, kept on the request until first read. */
interface FingerprintSource {
  parts: AgentParts;
  reasoning: Agent["reasoning"];
  listing: Listing;
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
  const { settled, count, tail } = source.listing;
  for (let i = 0; i < count; i++) json += "," + settled[i].json;
  for (const message of tail) json += "," + message.json;
  json += "]";
  // Only when set: requests without a reasoning level keep their fingerprints.
  if (source.reasoning) json += `,"reasoning":${canonicalJson(source.reasoning)}`;
  return json + `,"tools":${source.parts.toolsJson}}`;
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
 * @param listing the messages after the system prompt, as the history listed them
 * @param threadId the thread, whose id becomes the request's prompt-cache key
 * @param maxOutputTokens the output budget, if the request carries one
 * @param secrets answers messages with secret values, by interaction id: sent, never fingerprinted
 * @param labels the run's labels: on the request for gateways, never fingerprinted
 * @returns the frozen request, or a promise of it
 */
export function freezeRequest(
  agent: Agent,
  listing: Listing,
  threadId: string,
  maxOutputTokens: number | undefined,
  secrets?: ReadonlyMap<string, ProviderMessage>,
  labels?: Readonly<Record<string, string>>,
): ProviderRequest | Promise<ProviderRequest> {
  const parts = partsOf(agent);
  const messages = requestMessages(parts.system.message, listing);
  if (secrets?.size) {
    const { settled, count, tail } = listing;
    for (let i = 0; i < count + tail.length; i++) {
      const id = (i < count ? settled[i] : tail[i - count]).interactionId;
      const secret = id === undefined ? undefined : secrets.get(id);
      if (secret) messages[i + 1] = secret;
    }
  }
  const source: FingerprintSource = {
    parts,
    reasoning: agent.reasoning,
    listing,
    maxOutputTokens,
    fingerprint: undefined,
  };
  const request = { messages, tools: parts.tools } as ProviderRequest;
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  if (agent.reasoning) request.reasoning = agent.reasoning;
  request.cacheKey = threadId;
  // Only when there are some: requests of unlabelled runs keep their shape.
  if (labels !== undefined && Object.keys(labels).length > 0) {
    request.labels = labels as Record<string, string>;
  }
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
 * A request's own messages array: the system message, the settled provider
 * messages (copied as one array, not read from each history message), then
 * the current exchange's.
 */
function requestMessages(system: ProviderMessage, listing: Listing): ProviderMessage[] {
  const { settledMessages, count, tail } = listing;
  const messages: ProviderMessage[] = new Array(1 + count + tail.length);
  messages[0] = system;
  for (let i = 0; i < count; i++) messages[i + 1] = settledMessages[i];
  for (let i = 0; i < tail.length; i++) messages[count + 1 + i] = tail[i].message;
  return messages;
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
