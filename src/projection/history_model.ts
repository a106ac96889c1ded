/**
 * Folds journal entries into the provider history: the messages the model is
 * sent. Retries decide what counts: a resumed turn keeps its source's steps,
 * a regenerated turn replaces them (the old answer stays in the view only).
 *
 * @module
 */
import { canonicalJson } from "../identity/canonical_json.ts";
import type { ProviderMessage } from "../provider/gateway.ts";
import type {
  Entry,
  StepEntry,
  SupplementalContext,
  TurnStartedEntry,
} from "../journal/entries.ts";

/** A provider message with its canonical JSON, computed once on first use (fingerprints hash many per step). */
export class HistoryMessage {
  readonly message: ProviderMessage;
  /** For assistant messages: whose opaque state `message.state` is. */
  readonly stateKey?: string;
  #json: string | undefined;

  constructor(message: ProviderMessage, stateKey?: string) {
    this.message = message;
    this.stateKey = stateKey;
  }

  /** The message's canonical JSON. */
  get json(): string {
    return (this.#json ??= canonicalJson(this.message));
  }
}

/** One user message and the model's work on it, over every turn that retried it. */
interface Exchange {
  user: HistoryMessage;
  /** Messages per turn, so a regenerate can drop earlier turns' output. */
  segments: { turnId: string; messages: HistoryMessage[] }[];
}

/** What readers of the provider history need: the messages of a turn's next request. */
export type HistoryReader = Pick<HistoryModel, "messages" | "admittedChildEvents">;

/** The provider-facing projection of a thread's path. */
export class HistoryModel {
  readonly #exchanges: Exchange[] = [];
  readonly #supplemental = new Map<string, SupplementalContext[]>();
  #current: Exchange | undefined;
  readonly #childEvents = new Set<string>();

  /** Keys of the child facts already admitted on this path (see `parentEvents`). */
  get admittedChildEvents(): ReadonlySet<string> {
    return this.#childEvents;
  }

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    switch (entry.kind) {
      case "turn_started":
        return this.#turnStarted(entry);
      case "step":
        return this.#step(entry);
      case "tool_results":
        for (const result of entry.results) {
          this.#push(entry.turnId, {
            role: "tool",
            callId: result.callId,
            name: result.name,
            output: result.output,
            ...(result.status === "completed" ? {} : { isError: true }),
          });
        }
        return;
      case "child_events":
        for (const event of entry.events) {
          this.#childEvents.add(event.key);
          this.#push(entry.turnId, { role: "user", text: event.text });
        }
        return;
      case "tool_dispatched":
      case "turn_ended":
        return;
      default: {
        const never: never = entry;
        throw new Error(`Unhandled entry ${(never as Entry).kind}`);
      }
    }
  }

  /**
   * The messages for the next request of `turnId`: every exchange, with that
   * turn's supplemental context as an ephemeral user message right after its
   * user message. Opaque state is kept only where `stateKey` matches.
   */
  messages(turnId: string, stateKey: string): HistoryMessage[] {
    const out: HistoryMessage[] = [];
    const supplemental = this.#supplemental.get(turnId);
    for (const exchange of this.#exchanges) {
      out.push(exchange.user);
      if (supplemental && exchange === this.#current) {
        const text = supplemental.map((part) => `## ${part.title}\n\n${part.text}`).join("\n\n");
        out.push(toHistory({ role: "user", text }));
      }
      for (const segment of exchange.segments) {
        for (const message of segment.messages) {
          out.push(
            message.stateKey === undefined || message.stateKey === stateKey
              ? message
              : withoutState(message),
          );
        }
      }
    }
    return out;
  }

  #turnStarted(entry: TurnStartedEntry): void {
    if (entry.supplementalContext?.length) {
      this.#supplemental.set(entry.turnId, entry.supplementalContext);
    }
    if (entry.input) {
      const user: ProviderMessage = entry.input.attachments?.length
        ? { role: "user", text: entry.input.text, attachments: entry.input.attachments }
        : { role: "user", text: entry.input.text };
      this.#current = { user: toHistory(user), segments: [] };
      this.#exchanges.push(this.#current);
    } else if (entry.retryOf?.mode === "regenerate" && this.#current) {
      this.#current.segments = [];
    }
    this.#current?.segments.push({ turnId: entry.turnId, messages: [] });
  }

  #step(entry: StepEntry): void {
    if (entry.partial) return; // cut off by a cancel: shown to people, never to the model
    const message: ProviderMessage & { state?: unknown } = { role: "assistant", text: entry.text };
    if (entry.reasoning) message.reasoning = entry.reasoning;
    if (entry.calls.length > 0) {
      message.toolCalls = entry.calls.map((call) => ({
        callId: call.callId,
        name: call.name,
        arguments: call.arguments,
      }));
    }
    if (entry.state !== undefined) message.state = entry.state;
    this.#push(entry.turnId, message, entry.state === undefined ? undefined : entry.stateKey);
  }

  #push(turnId: string, message: ProviderMessage, stateKey?: string): void {
    const segment = this.#current?.segments.at(-1);
    if (!segment || segment.turnId !== turnId) return;
    segment.messages.push(toHistory(message, stateKey));
  }
}

/** Wraps a message with its canonical JSON. */
export function toHistory(message: ProviderMessage, stateKey?: string): HistoryMessage {
  return new HistoryMessage(message, stateKey);
}

function withoutState(message: HistoryMessage): HistoryMessage {
  const { state: _state, ...rest } = message.message as ProviderMessage & { state?: unknown };
  return toHistory(rest as ProviderMessage);
}
