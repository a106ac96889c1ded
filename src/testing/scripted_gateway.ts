/**
 * A deterministic, scripted model for tests and demos: each step answers one
 * provider attempt, and every request is recorded.
 *
 * @module
 */
import type {
  Gateway,
  GatewayInfo,
  ProviderEvent,
  ProviderRequest,
  Usage,
} from "../provider/gateway.ts";
import { ProviderError } from "../provider/provider_error.ts";

/** One scripted answer to one provider attempt. */
export type ScriptStep =
  | { text: string; reasoning?: string; usage?: Usage; delayMs?: number }
  /** `arguments`: a string is sent as raw argument text (it may be invalid JSON); anything else is JSON-encoded. */
  | {
    toolCalls: { name: string; arguments: unknown; callId?: string }[];
    text?: string;
    usage?: Usage;
    delayMs?: number;
  }
  | {
    error: {
      status?: number;
      retry: "retryable" | "timeout" | "never";
      message?: string;
      /** The failure's class, e.g. `context_overflow`; by default it follows `retry`. */
      kind?: ProviderError["kind"];
    };
    delayMs?: number;
  }
  /** Hold the stream open until the signal aborts (for cancel tests). */
  | { hang: true; text?: string };

/** A gateway that plays a script and records what it was sent. */
/**
 * A step decided when its attempt starts, from a copy of the request: for
 * scripts whose next call depends on an earlier result (ids the engine chose).
 */
export type DynamicStep = (request: ProviderRequest) => ScriptStep;

/** A gateway that plays a script and records what it was sent. */
export interface ScriptedGateway extends Gateway {
  /** Every request the engine sent, in order: deep copies taken when each attempt started. */
  readonly requests: ProviderRequest[];
  /** How many steps have not been played yet. */
  readonly remaining: number;
}

/**
 * Builds a scripted gateway. One step answers one provider attempt, including
 * attempts that fail or are aborted; the cursor is shared by every thread that
 * uses the gateway. When the steps run out, the attempt fails with a
 * non-retryable `ProviderError` ("script exhausted").
 *
 * @param steps the answers, in order; a function is asked for its step when its attempt starts
 * @param info overrides for `gateway.info`
 * @returns the gateway
 * @example
 * ```ts
 * import { scriptedGateway } from "@floret/engine/testing";
 * const gateway = scriptedGateway([{ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }, { text: "3" }]);
 * ```
 */
export function scriptedGateway(
  steps: (ScriptStep | DynamicStep)[],
  info?: Partial<GatewayInfo>,
): ScriptedGateway {
  const script = [...steps];
  const requests: ProviderRequest[] = [];
  let cursor = 0;
  let callCounter = 0;
  const gatewayInfo: GatewayInfo = {
    provider: "scripted",
    model: "scripted-model",
    stateKey: "scripted:scripted-model",
    capabilities: { reasoning: "supported", images: true, contextWindowTokens: 128_000 },
    ...info,
  };

  async function* play(step: ScriptStep, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if ("delayMs" in step && step.delayMs) await abortableDelay(step.delayMs, signal);
    signal.throwIfAborted();
    if ("hang" in step) {
      if (step.text) yield { type: "text", delta: step.text };
      await abortableDelay(Number.POSITIVE_INFINITY, signal);
      return;
    }
    if ("error" in step) {
      throw new ProviderError(step.error.message ?? "Scripted provider error", {
        status: step.error.status,
        retry: step.error.retry,
        kind: step.error.kind ?? (step.error.retry === "never" ? "invalid_request" : "server"),
      });
    }
    if ("toolCalls" in step) {
      if (step.text) yield { type: "text", delta: step.text };
      for (const call of step.toolCalls) {
        const callId = call.callId ?? `call_scripted_${++callCounter}`;
        const args = typeof call.arguments === "string"
          ? call.arguments
          : JSON.stringify(call.arguments);
        yield { type: "tool-call-start", callId, name: call.name };
        yield { type: "tool-call-delta", callId, argumentsDelta: args };
        yield { type: "tool-call-end", callId };
      }
      if (step.usage) yield { type: "usage", usage: { ...step.usage } };
      yield { type: "finish", reason: "tool_calls" };
      return;
    }
    if (step.reasoning) yield { type: "reasoning", delta: step.reasoning };
    // Split text in two so consumers see real streaming growth.
    const cut = Math.ceil(step.text.length / 2);
    if (step.text.length > 0) yield { type: "text", delta: step.text.slice(0, cut) };
    if (step.text.length > cut) yield { type: "text", delta: step.text.slice(cut) };
    if (step.usage) yield { type: "usage", usage: { ...step.usage } };
    yield { type: "finish", reason: "stop" };
  }

  return {
    info: gatewayInfo,
    requests,
    get remaining(): number {
      return script.length - cursor;
    },
    stream(
      request: ProviderRequest,
      options: { signal: AbortSignal },
    ): AsyncIterable<ProviderEvent> {
      requests.push(structuredClone(request));
      const planned = script[cursor];
      cursor++;
      // A dynamic step reads what the engine sent (e.g. a child's thread id in a tool result).
      const step = typeof planned === "function" ? planned(structuredClone(request)) : planned;
      if (step === undefined) {
        return failing(
          new ProviderError(`Script exhausted: no step for attempt ${cursor}`, {
            retry: "never",
            kind: "unknown",
          }),
        );
      }
      return play(step, options.signal);
    },
  };
}

// deno-lint-ignore require-yield
async function* failing(error: ProviderError): AsyncGenerator<ProviderEvent> {
  throw error;
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done(): void {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort(): void {
      if (timer !== undefined) clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
