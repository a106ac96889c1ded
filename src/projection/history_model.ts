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
import { answersText } from "./answers_message.ts";
import type { InteractionsReader } from "./interactions.ts";

/** A provider message with its canonical JSON, computed once on first use (fingerprints hash many per step). */
export class HistoryMessage {
  readonly message: ProviderMessage;
  /** For assistant messages: whose opaque state `message.state` is. */
  readonly stateKey?: string;
  /** For an answers message: its interaction, whose secret answers a resumed run may render. */
  readonly interactionId?: string;
  #json: string | undefined;

  constructor(message: ProviderMessage, stateKey?: string, interactionId?: string) {
    this.message = message;
    this.stateKey = stateKey;
    if (interactionId !== undefined) this.interactionId = interactionId;
  }

  /** The message's canonical JSON. */
  get json(): string {
    return (this.#json ??= canonicalJson(this.message));
  }
}

/**
 * A step with tool calls: its results are kept in call order whatever order
 * they commit in, and user messages that arrive while it is open (answers,
 * steering) follow its results.
 */
class Batch {
  readonly assistant: HistoryMessage;
  readonly order: readonly string[];
  readonly results = new Map<string, HistoryMessage>();
  readonly after: HistoryMessage[] = [];

  constructor(assistant: HistoryMessage, order: readonly string[]) {
    this.assistant = assistant;
    this.order = order;
  }

  get complete(): boolean {
    return this.results.size >= this.order.length;
  }

  flatten(out: HistoryMessage[]): void {
    out.push(this.assistant);
    for (const callId of this.order) {
      const result = this.results.get(callId);
      if (result) out.push(result);
    }
    out.push(...this.after);
  }
}

/** One user message and the model's work on it, over every turn that retried it. */
interface Exchange {
  user: HistoryMessage;
  /** Messages per turn, so a regenerate can drop earlier turns' output. */
  segments: { turnId: string; messages: (HistoryMessage | Batch)[] }[];
}

/** What readers of the provider history need: the messages of a turn's next request. */
export type HistoryReader = Pick<HistoryModel, "messages">;

/** The provider-facing projection of a thread's path. */
export class HistoryModel {
  readonly #exchanges: Exchange[] = [];
  readonly #supplemental = new Map<string, SupplementalContext[]>();
  /** `${turnId}|${callId}` → the batch that made the call. */
  readonly #batches = new Map<string, Batch>();
  readonly #interactions: InteractionsReader | undefined;
  #current: Exchange | undefined;

  /** @param interactions the path's interactions (answers become user messages) */
  constructor(interactions?: InteractionsReader) {
    this.#interactions = interactions;
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
          const message = toHistory({
            role: "tool",
            callId: result.callId,
            name: result.name,
            output: result.output,
            ...(result.status === "completed" ? {} : { isError: true }),
          });
          const batch = this.#batches.get(`${entry.turnId}|${result.callId}`);
          if (batch) batch.results.set(result.callId, message);
          else this.#pushMessage(entry.turnId, message);
        }
        return;
      case "steer":
        return this.#pushUser(entry.turnId, toHistory({ role: "user", text: entry.text }));
      case "interaction_resolved": {
        const state = this.#interactions?.get(entry.interactionId);
        if (entry.resolution.type !== "answers" || !state?.questions) return;
        const answers = new Map(entry.resolution.answers.map((a) => [a.questionId, a.value]));
        const text = answersText(state.questions, answers);
        return this.#pushUser(entry.turnId, toHistory({ role: "user", text }, undefined, state.id));
      }
      case "tool_dispatched":
      case "turn_ended":
      case "interaction_opened":
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
        for (const part of segment.messages) {
          const message = part instanceof Batch ? part.assistant : part;
          const shown = message.stateKey === undefined || message.stateKey === stateKey
            ? message
            : withoutState(message);
          if (part instanceof Batch) {
            out.push(shown);
            const rest: HistoryMessage[] = [];
            part.flatten(rest);
            for (let i = 1; i < rest.length; i++) out.push(rest[i]);
          } else out.push(shown);
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
    const history = toHistory(message, entry.state === undefined ? undefined : entry.stateKey);
    if (entry.calls.length === 0) {
      this.#pushMessage(entry.turnId, history);
      return;
    }
    const batch = new Batch(history, entry.calls.map((call) => call.callId));
    if (!this.#pushMessage(entry.turnId, batch)) return;
    for (const call of entry.calls) this.#batches.set(`${entry.turnId}|${call.callId}`, batch);
  }

  #pushMessage(turnId: string, message: HistoryMessage | Batch): boolean {
    const segment = this.#current?.segments.at(-1);
    if (!segment || segment.turnId !== turnId) return false;
    segment.messages.push(message);
    return true;
  }

  /** A user message of the running turn: after the open batch's results, if one is open. */
  #pushUser(turnId: string, message: HistoryMessage): void {
    const segment = this.#current?.segments.at(-1);
    if (!segment || segment.turnId !== turnId) return;
    const last = segment.messages.at(-1);
    if (last instanceof Batch && !last.complete) last.after.push(message);
    else segment.messages.push(message);
  }
}

/** Wraps a message with its canonical JSON. */
export function toHistory(
  message: ProviderMessage,
  stateKey?: string,
  interactionId?: string,
): HistoryMessage {
  return new HistoryMessage(message, stateKey, interactionId);
}

function withoutState(message: HistoryMessage): HistoryMessage {
  const { state: _state, ...rest } = message.message as ProviderMessage & { state?: unknown };
  return toHistory(rest as ProviderMessage);
}
