/**
 * Folds journal entries into the provider history: the messages the model is
 * sent. Retries decide what counts: a resumed turn keeps its source's steps,
 * a regenerated turn replaces them (the old answer stays in the view only).
 *
 * @module
 */
import { checkpointText } from "../../context/checkpoint_message.ts";
import type { TokenCounter } from "../../context/token_counter.ts";
import type { ProviderMessage, Usage } from "../../provider/gateway.ts";
import type { CompactionEntry, Entry, StepEntry, TurnStartedEntry } from "../../journal/entries.ts";
import { answersText } from "./answers_message.ts";
import type { InteractionsReader } from "../interactions.ts";
import { PairMap } from "../pair_map.ts";
import { appended } from "../appended.ts";
import { HistoryMessage, listedMessages, type Listing, toHistory } from "./history_message.ts";
import { Batch } from "./history_batch.ts";
import { userMessageText } from "./user_input_text.ts";

/** An installed compaction: the summary message replaces every message before `cutSeq`. */
interface Checkpoint {
  message: HistoryMessage;
  cutSeq: number;
  /** Seq of the compaction entry. */
  seq: number;
  /** The first exchange holding retained messages: requests start reading there. */
  fromExchange: number;
}

/** The latest provider-confirmed usage of a step still on the model's side of the checkpoint. */
export interface ConfirmedUsage {
  usage: Usage;
  /** Seq of the step entry that reported it. */
  seq: number;
}

/** One user message and the model's work on it, over every turn that retried it. */
interface Exchange {
  user: HistoryMessage;
  /** Messages per turn, so a regenerate can drop earlier turns' output. */
  segments: { turnId: string; messages: (HistoryMessage | Batch)[] }[];
}

/**
 * The messages of the exchanges before the current one, as `messages` lists
 * them for one state key: `upTo` is the first exchange not yet listed.
 */
interface Prefix {
  out: HistoryMessage[];
  /**
   * `out`'s provider messages, index for index: a request copies this one
   * array instead of reading `.message` from every message of the thread.
   */
  provider: ProviderMessage[];
  upTo: number;
  /** The highest journal seq among `out`'s messages (0 when none has one). */
  maxSeq: number;
  /** Tokens of `out[0..counted)` by `counter` (one agent sizes a thread at a time). */
  counter?: TokenCounter;
  tokens: number;
  counted: number;
}

/** What a request's estimate can take from the settled exchanges without summing them again. */
export interface SettledFigures {
  /** How many leading messages of the last `messages()` list (same state key) are settled. */
  count: number;
  /** Their tokens by the counter asked for. */
  tokens: number;
  /** The highest journal seq among them (0 when none has one). */
  maxSeq: number;
}

/** What readers of the provider history need: the messages of a turn's next request. */
export type HistoryReader = Pick<
  HistoryModel,
  | "messages"
  | "listing"
  | "settled"
  | "confirmed"
  | "currentInput"
  | "compactionFailures"
  | "admittedChildEvents"
  | "labelsOf"
>;

/** The provider-facing projection of a thread's path. */
export class HistoryModel {
  #exchanges: Exchange[] = [];
  #current: Exchange | undefined;
  #checkpoint: Checkpoint | undefined;
  #confirmed: ConfirmedUsage | undefined;
  #failedInARow = 0;
  // This set and the two maps below are made on first use: an idle cached
  // actor keeps no empty table for sub-agents, tool calls or lists it never had.
  #childEvents: Set<string> | undefined;
  /** (turn id, call id) → the batch that made the call. */
  #batches: PairMap<Batch> | undefined;
  readonly #interactions: InteractionsReader | undefined;
  /**
   * Listed messages of the settled exchanges, per state key. Only the current
   * (last) exchange changes as a turn runs, so each request lists the earlier
   * ones once and afterwards only appends; a change to an exchange already
   * listed (a late tool result) or a new checkpoint drops the lists.
   */
  #prefixes: Map<string, Prefix> | undefined;
  /** The highest `upTo` among `#prefixes`: a change below it drops them. */
  #listedUpTo = 0;
  /**
   * The run labels of the latest turn started on the path (a run always
   * belongs to it; a retry copies them). Only the latest: the labels of a
   * thread's earlier turns are never needed again, so none is kept.
   */
  #labels: { turnId: string; labels: Readonly<Record<string, string>> } | undefined;

  /** @param interactions the path's interactions (answers become user messages) */
  constructor(interactions?: InteractionsReader) {
    this.#interactions = interactions;
  }

  /** Keys of the child facts already admitted on this path (see `parentEvents`). */
  get admittedChildEvents(): ReadonlySet<string> {
    return this.#childEvents ?? NO_CHILD_EVENTS;
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
          const { callId, name, output } = result;
          // Two literals, not a spread of a conditional object: V8 builds a
          // literal that ends in a spread on a slow path (once per tool result).
          const message = toHistory(
            result.status === "completed"
              ? { role: "tool", callId, name, output }
              : { role: "tool", callId, name, output, isError: true },
            undefined,
            entry.seq,
          );
          // A re-run of an interrupted call answers the batch of the turn that made it.
          const batch = this.#batches?.get(entry.ofTurnId ?? entry.turnId, result.callId);
          if (batch) {
            this.#changed(batch.exchange);
            batch.setResult(result.callId, batch.adopt(message));
            // A re-run's result without its batch would be a tool message with no call: dropped.
          } else if (entry.ofTurnId === undefined) this.#pushMessage(entry.turnId, message);
        }
        return;
      case "compaction":
        return this.#compaction(entry);
      case "child_events":
        for (const event of entry.events) {
          (this.#childEvents ??= new Set()).add(event.key);
          this.#pushMessage(
            entry.turnId,
            toHistory({ role: "user", text: event.text }, undefined, entry.seq),
          );
        }
        return;
      case "note":
        return this.#pushUser(
          entry.turnId,
          toHistory({ role: "user", text: entry.text }, undefined, entry.seq),
        );
      case "steer":
        return this.#pushUser(
          entry.turnId,
          toHistory({ role: "user", text: entry.text }, undefined, entry.seq),
        );
      case "interaction_resolved": {
        const state = this.#interactions?.get(entry.interactionId);
        if (entry.resolution.type !== "answers" || !state?.questions) return;
        const answers = new Map(entry.resolution.answers.map((a) => [a.questionId, a.value]));
        const text = answersText(state.questions, answers);
        return this.#pushUser(
          entry.turnId,
          toHistory({ role: "user", text }, undefined, entry.seq, state.id),
        );
      }
      case "tool_dispatched":
      case "turn_ended":
      case "interaction_opened":
      case "compaction_started":
        return;
      default: {
        const never: never = entry;
        throw new Error(`Unhandled entry ${(never as Entry).kind}`);
      }
    }
  }

  /**
   * The messages for the next request: the checkpoint's summary (if a
   * compaction was installed), then every message from its cut on, with
   * `supplemental` (the running turn's ephemeral context) right after the
   * current user message. Opaque state is kept only where `stateKey` matches.
   * Only exchanges after the checkpoint are read, so the cost follows what is
   * sent, not the thread's length.
   */
  messages(stateKey: string, supplemental?: HistoryMessage): HistoryMessage[] {
    return listedMessages(this.listing(stateKey, supplemental));
  }

  /**
   * The messages `messages` lists, as the settled part (shared, with its
   * provider messages) and the current exchange's part: what a request is
   * built from without copying the thread's messages twice.
   *
   * @param stateKey whose opaque state is kept
   * @param supplemental the running turn's ephemeral context, after the current user message
   * @returns the two parts
   */
  listing(stateKey: string, supplemental?: HistoryMessage): Listing {
    const checkpoint = this.#checkpoint;
    const cutSeq = checkpoint?.cutSeq ?? 0;
    const from = checkpoint?.fromExchange ?? 0;
    // The current exchange is the last one; every one before it is settled.
    const settled = this.#exchanges.length - 1;
    const prefixes = this.#prefixes ??= new Map();
    let prefix = prefixes.get(stateKey);
    if (!prefix) {
      prefix = {
        out: checkpoint ? [checkpoint.message] : [],
        provider: checkpoint ? [checkpoint.message.message] : [],
        upTo: from,
        maxSeq: 0,
        tokens: 0,
        counted: 0,
      };
      prefixes.set(stateKey, prefix);
    }
    if (prefix.upTo < settled) {
      const start = prefix.out.length;
      for (; prefix.upTo < settled; prefix.upTo++) {
        this.#list(this.#exchanges[prefix.upTo], cutSeq, stateKey, undefined, prefix.out);
      }
      for (let i = start; i < prefix.out.length; i++) {
        const message = prefix.out[i];
        prefix.provider.push(message.message);
        const seq = message.seq;
        if (seq !== undefined && seq > prefix.maxSeq) prefix.maxSeq = seq;
      }
    }
    if (prefix.upTo > this.#listedUpTo) this.#listedUpTo = prefix.upTo;
    const tail: HistoryMessage[] = [];
    if (settled >= from) {
      this.#list(this.#exchanges[settled], cutSeq, stateKey, supplemental, tail);
    }
    return {
      settled: prefix.out,
      settledMessages: prefix.provider,
      count: prefix.out.length,
      tail,
    };
  }

  /**
   * Figures of the settled part of the last `messages(stateKey)` list: its
   * leading messages that every later list repeats, their tokens by `counter`
   * (summed once, then only what was appended), and their highest seq. A
   * request's estimate then sums only the messages after them.
   *
   * @param stateKey the state key `messages` was last called with
   * @param counter the agent's token counter
   * @returns the figures (zero when nothing is settled)
   */
  settled(stateKey: string, counter: TokenCounter): SettledFigures {
    const prefix = this.#prefixes?.get(stateKey);
    if (!prefix) return { count: 0, tokens: 0, maxSeq: 0 };
    if (prefix.counter !== counter) {
      prefix.counter = counter;
      prefix.tokens = 0;
      prefix.counted = 0;
    }
    for (; prefix.counted < prefix.out.length; prefix.counted++) {
      prefix.tokens += prefix.out[prefix.counted].tokensBy(counter);
    }
    return { count: prefix.counted, tokens: prefix.tokens, maxSeq: prefix.maxSeq };
  }

  /** Appends one exchange's messages from the cut on (see `messages`). */
  #list(
    exchange: Exchange,
    cutSeq: number,
    stateKey: string,
    supplemental: HistoryMessage | undefined,
    out: HistoryMessage[],
  ): void {
    if (exchange.user.position! >= cutSeq) out.push(exchange.user);
    if (supplemental && exchange === this.#current) out.push(supplemental);
    for (const segment of exchange.segments) {
      for (const part of segment.messages) {
        const message = part instanceof Batch ? part.assistant : part;
        if (message.position! < cutSeq) continue;
        out.push(
          message.stateKey === undefined || message.stateKey === stateKey
            ? message
            : withoutState(message),
        );
        if (part instanceof Batch) part.rest(out);
      }
    }
  }

  /** Records a change to exchange `index`: lists that cover it are dropped. */
  #changed(index: number): void {
    if (index < this.#listedUpTo) this.#dropListed();
  }

  #dropListed(): void {
    this.#prefixes = undefined;
    this.#listedUpTo = 0;
  }

  /**
   * The run labels of a turn: those its `turn_started` recorded, `{}` when
   * it recorded none or is not the latest turn of the path.
   *
   * @param turnId the turn
   * @returns its labels (frozen: hand them on as they are)
   */
  labelsOf(turnId: string): Readonly<Record<string, string>> {
    const latest = this.#labels;
    return latest !== undefined && latest.turnId === turnId ? latest.labels : NO_LABELS;
  }

  /** The user message of the latest exchange (the current user input). */
  currentInput(): HistoryMessage | undefined {
    return this.#current?.user;
  }

  /** The latest usage a provider confirmed for a step after the checkpoint, if any. */
  confirmed(): ConfirmedUsage | undefined {
    return this.#confirmed;
  }

  /** Automatic compactions that failed since the last one that succeeded (the circuit breaker's count). */
  compactionFailures(): number {
    return this.#failedInARow;
  }

  #compaction(entry: CompactionEntry): void {
    // A record written because the operation was stopped says nothing about its summary.
    if (entry.status === "failed" && entry.trigger !== "manual" && !entry.interrupted) {
      this.#failedInARow++;
    }
    if (entry.status !== "compacted" || entry.cutSeq === undefined) return;
    this.#failedInARow = 0;
    let fromExchange = this.#exchanges.length;
    for (let i = this.#exchanges.length - 1; i >= 0; i--) {
      fromExchange = i;
      if (this.#exchanges[i].user.position! <= entry.cutSeq) break;
    }
    const text = checkpointText(entry.summary ?? "", entry.keptInputs ?? []);
    this.#dropListed(); // the lists start at the old checkpoint
    this.#checkpoint = {
      message: toHistory({ role: "user", text }),
      cutSeq: entry.cutSeq,
      seq: entry.seq,
      fromExchange,
    };
    // Usage reported before the cut measured the old, longer request.
    this.#confirmed = undefined;
  }

  #turnStarted(entry: TurnStartedEntry): void {
    this.#labels = entry.labels === undefined
      ? undefined
      : { turnId: entry.turnId, labels: Object.freeze({ ...entry.labels }) };
    if (entry.input) {
      // References and context items are rendered into the message's text (user_input_text.ts).
      const text = userMessageText(entry.input);
      const user: ProviderMessage = entry.input.attachments?.length
        ? { role: "user", text, attachments: entry.input.attachments }
        : { role: "user", text };
      this.#current = { user: toHistory(user, undefined, entry.seq), segments: [] };
      this.#exchanges = appended(this.#exchanges, this.#current);
    } else if (entry.retryOf?.mode === "regenerate" && this.#current) {
      this.#changed(this.#exchanges.length - 1);
      this.#current.segments = [];
      this.#confirmed = undefined; // it measured the answer being replaced
    }
    if (this.#current) this.#changed(this.#exchanges.length - 1);
    const current = this.#current;
    if (current) {
      current.segments = appended(current.segments, { turnId: entry.turnId, messages: [] });
    }
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
    const stateKey = entry.state === undefined ? undefined : entry.stateKey;
    const history = toHistory(message, stateKey, entry.seq);
    const batch = entry.calls.length === 0
      ? undefined
      : new Batch(history, entry.calls.map((call) => call.callId), this.#exchanges.length - 1);
    if (!this.#pushMessage(entry.turnId, batch ?? history)) return;
    if (entry.usage && !entry.unconfirmed) this.#confirmed = { usage: entry.usage, seq: entry.seq };
    if (!batch) return;
    const batches = this.#batches ??= new PairMap();
    for (const call of entry.calls) batches.set(entry.turnId, call.callId, batch);
  }

  #pushMessage(turnId: string, message: HistoryMessage | Batch): boolean {
    const segment = this.#current?.segments.at(-1);
    if (!segment || segment.turnId !== turnId) return false;
    this.#changed(this.#exchanges.length - 1);
    segment.messages = appended(segment.messages, message);
    return true;
  }

  /** A user message of the running turn: after the open batch's results, if one is open. */
  #pushUser(turnId: string, message: HistoryMessage): void {
    const segment = this.#current?.segments.at(-1);
    if (!segment || segment.turnId !== turnId) return;
    this.#changed(this.#exchanges.length - 1);
    const last = segment.messages.at(-1);
    if (last instanceof Batch && !last.complete) last.addAfter(message);
    else segment.messages = appended(segment.messages, message);
  }
}

/** What `labelsOf` answers for a turn without labels. */
const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/** What `admittedChildEvents` answers before the first child fact (read-only by type). */
const NO_CHILD_EVENTS: ReadonlySet<string> = new Set();

function withoutState(message: HistoryMessage): HistoryMessage {
  const { state: _state, ...rest } = message.message as ProviderMessage & { state?: unknown };
  const copy = toHistory(rest as ProviderMessage, undefined, message.seq, message.interactionId);
  copy.position = message.position;
  return copy;
}
