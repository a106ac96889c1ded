/**
 * Assembling one attempt's streamed events into a step output: text and
 * reasoning deltas concatenated, tool calls with their argument text, usage,
 * the finish reason and the provider's state. Every event is checked as it
 * arrives: the gateway is host code.
 *
 * @module
 */
import type {
  CitedSource,
  FinishReason,
  HostedToolCall,
  ProviderEvent,
  Usage,
} from "../../provider/gateway.ts";
import { ProviderError } from "../../provider/provider_error.ts";
import type { AttemptClock } from "./attempt_clock.ts";
import type { ReadSink } from "./bounded_reads.ts";
import { ContractViolation } from "../run/contract_violation.ts";
import { checkEventFields } from "./event_shape.ts";
import { callHostCodeSync, describeThrown } from "../run/host_code.ts";

/** A provider response, assembled. */
export interface StepOutput {
  text: string;
  reasoning: string;
  calls: { callId: string; name: string; arguments: string }[];
  finish: FinishReason;
  usage?: Usage;
  state?: unknown;
  /** Calls the provider ran itself (hosted search). */
  hosted?: HostedToolCall[];
  /** Sources the text cites. */
  sources?: CitedSource[];
}

/** Where live deltas go while the attempt streams. */
export interface DeltaHook {
  onDelta(kind: "thinking" | "assistant", delta: string): void;
  /** Output arrived (what moves the between-outputs clock); for progress. */
  onOutput?(): void;
}

/** The output of one attempt, built event by event (a {@link ReadSink} of the stream). */
export class StepAssembly implements ReadSink<ProviderEvent> {
  readonly output: StepOutput = { text: "", reasoning: "", calls: [], finish: "stop" };
  /** Whether the finish event arrived. */
  finished = false;
  // Made at the first tool call: a text step (every run's last) needs none.
  #calls: Map<string, StepOutput["calls"][number]> | undefined;
  readonly #hooks: DeltaHook;
  readonly #clock: AttemptClock;

  /**
   * @param hooks told of each non-empty text or reasoning delta
   * @param clock told that output arrived
   */
  constructor(hooks: DeltaHook, clock: AttemptClock) {
    this.#hooks = hooks;
    this.#clock = clock;
  }

  /** Output arrived: the clock moves on and progress is told. */
  #output(): void {
    this.#clock.tick();
    this.#hooks.onOutput?.();
  }

  /**
   * Takes one read of the stream.
   *
   * @param next what the iterator answered
   * @returns `true` once the stream is over (its end, or the finish event)
   * @throws {ProviderError} `stream_interrupted` for a read or event the stream cannot carry
   * @throws {ContractViolation} for an event field of the wrong type or a repeated call id
   */
  take(next: IteratorResult<ProviderEvent>): boolean {
    if (typeof next !== "object" || next === null) {
      throw streamBroken("the stream's iterator returned a non-object");
    }
    if (next.done) return true;
    const event = next.value as ProviderEvent;
    if (typeof event !== "object" || event === null) {
      throw streamBroken(`the stream yielded ${describeThrown(event)}`);
    }
    checkEventFields(event);
    const output = this.output;
    switch (event.type) {
      case "text":
        output.text += event.delta;
        if (event.delta) {
          this.#output();
          this.#hooks.onDelta("assistant", event.delta);
        }
        break;
      case "reasoning":
        output.reasoning += event.delta;
        if (event.delta) {
          this.#output();
          this.#hooks.onDelta("thinking", event.delta);
        }
        break;
      case "tool-call-start": {
        const calls = this.#calls ??= new Map();
        if (calls.has(event.callId)) {
          throw new ContractViolation(
            `The gateway sent two tool calls with the same id in one step: ${
              describeThrown(event.callId)
            }`,
          );
        }
        this.#output();
        const call = { callId: event.callId, name: event.name, arguments: "" };
        calls.set(event.callId, call);
        output.calls.push(call);
        break;
      }
      case "tool-call-delta": {
        const call = this.#calls?.get(event.callId);
        if (!call) throw streamBroken(`tool-call-delta for unknown call ${event.callId}`);
        call.arguments += event.argumentsDelta;
        if (event.argumentsDelta) this.#output();
        break;
      }
      case "tool-call-end":
        if (!this.#calls?.has(event.callId)) {
          throw streamBroken(`tool-call-end for unknown call ${event.callId}`);
        }
        this.#output();
        break;
      case "usage":
        // A copy either way; the first usage (most steps' only one) spreads one object, not two.
        output.usage = output.usage === undefined
          ? { ...event.usage }
          : { ...output.usage, ...event.usage };
        break;
      case "finish":
        this.#output();
        output.finish = event.reason;
        if (event.state !== undefined) output.state = storableState(event.state);
        if (event.hosted?.length) {
          output.hosted = event.hosted.slice(0, MAX_HOSTED).map(hostedCall);
        }
        if (event.sources?.length) {
          output.sources = event.sources.slice(0, MAX_SOURCES).map(citedSource);
        }
        this.finished = true;
        return true;
      default: {
        const never: never = event;
        throw streamBroken(`unknown event ${(never as { type: string }).type}`);
      }
    }
    return false;
  }
}

// Bounds of what a step keeps of hosted calls and citations: a provider
// (host code) cannot grow one journal entry without limit through them.
const MAX_HOSTED = 50;
const MAX_RESULTS = 50;
const MAX_SOURCES = 200;
const MAX_URL = 2_048;
const MAX_TEXT = 1_000;

/** A hosted call as stored: only the known fields, copied and bounded. */
function hostedCall(event: HostedToolCall): HostedToolCall {
  const call: HostedToolCall = {
    callId: event.callId,
    name: clip(event.name, 64),
    status: event.status,
  };
  if (event.query !== undefined) call.query = clip(event.query, MAX_TEXT);
  if (event.results !== undefined) {
    call.results = event.results.filter((result) => result.url.length <= MAX_URL)
      .slice(0, MAX_RESULTS)
      .map(({ url, title, snippet }) => {
        const result: NonNullable<HostedToolCall["results"]>[number] = { url };
        if (typeof title === "string") result.title = clip(title, 300);
        if (typeof snippet === "string") result.snippet = clip(snippet, MAX_TEXT);
        return result;
      });
  }
  return call;
}

/** A citation as stored; a range that is not one (negative, reversed) is dropped. */
function citedSource(event: CitedSource): CitedSource {
  const source: CitedSource = { url: clip(event.url, MAX_URL) };
  if (event.title !== undefined) source.title = clip(event.title, 300);
  const { start, end } = event;
  if (start !== undefined && end !== undefined && start >= 0 && end >= start) {
    source.start = start;
    source.end = end;
  }
  return source;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** Provider state is stored with the step: it must be JSON, checked before the commit. */
function storableState(state: unknown): unknown {
  // What JSON would silently change (a Map to {}, a function dropped) is refused, not stored changed.
  const unfaithful = callHostCodeSync(() => jsonLoss(state, "finish.state"));
  if (!unfaithful.ok || unfaithful.value !== undefined) {
    throw new ContractViolation(
      `The gateway's finish.state cannot be stored as JSON: ${
        unfaithful.ok ? unfaithful.value : unfaithful.message
      }`,
    );
  }
  const encoded = callHostCodeSync(() => JSON.stringify(state));
  if (!encoded.ok || typeof encoded.value !== "string") {
    throw new ContractViolation(
      `The gateway's finish.state cannot be stored as JSON: ${
        encoded.ok ? "it has no JSON form" : encoded.message
      }`,
    );
  }
  return JSON.parse(encoded.value);
}

/**
 * Where JSON would not keep a value as it is: a function, symbol, BigInt,
 * non-finite number, or an object other than a plain object or array (a Map,
 * a Set, a Date). `undefined` object properties are dropped by JSON, as
 * expected of any JSON value. Cycles are left to JSON.stringify, which throws.
 *
 * @returns a description of the first loss, or `undefined` when none
 */
function jsonLoss(value: unknown, path: string, seen = new Set<object>()): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${path} is ${value}`;
    case "object": {
      if (value === null) return undefined;
      if (seen.has(value)) return undefined;
      seen.add(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (value[i] === undefined) return `${path}[${i}] is undefined`;
          const loss = jsonLoss(value[i], `${path}[${i}]`, seen);
          if (loss) return loss;
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        return `${path} is a ${value.constructor?.name ?? "non-plain object"}`;
      }
      for (const [key, item] of Object.entries(value)) {
        const loss = jsonLoss(item, `${path}.${key}`, seen);
        if (loss) return loss;
      }
      return undefined;
    }
    default:
      return `${path} is a ${typeof value}`;
  }
}

/**
 * The error of a stream that broke off or sent what no stream may.
 *
 * @param detail what was wrong
 * @returns a retryable `stream_interrupted` error
 */
export function streamBroken(detail: string): ProviderError {
  return new ProviderError(`Provider stream interrupted: ${detail}`, {
    retry: "retryable",
    kind: "stream_interrupted",
  });
}
