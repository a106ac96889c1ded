/**
 * One message of the provider history, with what requests need of it
 * computed once on first use: its canonical JSON (fingerprints hash many
 * per step) and its token count by each counter; and a listing of such
 * messages, as the history model hands a request its messages.
 *
 * @module
 */
import { roughCounter, type TokenCounter } from "../../context/token_counter.ts";
import { canonicalJson } from "../../identity/canonical_json.ts";
import type { ProviderMessage } from "../../provider/gateway.ts";

/** A provider message with its canonical JSON, computed once on first use (fingerprints hash many per step). */
export class HistoryMessage {
  readonly message: ProviderMessage;
  /** For assistant messages: whose opaque state `message.state` is. */
  readonly stateKey?: string;
  /** The journal entry it comes from; absent for the checkpoint and supplemental messages. */
  readonly seq?: number;
  /**
   * Where a compaction cut compares it: its own `seq`, except inside a tool
   * batch, whose results and the user messages that arrived while it was open
   * take the batch's step seq (they may commit in any order, and a cut must
   * never separate them from their calls).
   */
  position?: number;
  /** For an answers message: its interaction, whose secret answers a resumed run may render. */
  readonly interactionId?: string;
  #json: string | undefined;
  #tokens: number | undefined;
  // One slot for an agent's own counter: a thread is sized by one agent at a time.
  #counted: { counter: TokenCounter; tokens: number } | undefined;

  constructor(message: ProviderMessage, stateKey?: string, seq?: number, interactionId?: string) {
    this.message = message;
    this.stateKey = stateKey;
    if (seq !== undefined) this.seq = this.position = seq;
    if (interactionId !== undefined) this.interactionId = interactionId;
  }

  /** The message's canonical JSON. */
  get json(): string {
    return (this.#json ??= canonicalJson(this.message));
  }

  /** The default (rough) token estimate of the message, computed once. */
  get tokens(): number {
    return (this.#tokens ??= roughCounter.message(this.message));
  }

  /**
   * The message's tokens by a given counter, cached.
   *
   * @param counter the agent's counter
   * @returns the count
   */
  tokensBy(counter: TokenCounter): number {
    // The rough count read in place (not through the getter): every request sums its turn's messages.
    if (counter === roughCounter) return (this.#tokens ??= roughCounter.message(this.message));
    const counted = this.#counted;
    if (counted?.counter === counter) return counted.tokens;
    const tokens = counter.message(this.message);
    this.#counted = { counter, tokens };
    return tokens;
  }
}

/** Wraps a message with its canonical JSON. */
export function toHistory(
  message: ProviderMessage,
  stateKey?: string,
  seq?: number,
  interactionId?: string,
): HistoryMessage {
  return new HistoryMessage(message, stateKey, seq, interactionId);
}

/**
 * The messages of a turn's next request in two parts: the settled exchanges'
 * (shared with the model, which only ever appends to them) and the current
 * exchange's (the caller's). Building a request then copies one array of the
 * settled part instead of walking the thread's messages.
 */
export interface Listing {
  /** The settled messages are `settled[0..count)`; never change this array. */
  readonly settled: readonly HistoryMessage[];
  /** Their provider messages, index for index (shared too: never change it). */
  readonly settledMessages: readonly ProviderMessage[];
  /** How many leading entries of `settled` (and `settledMessages`) belong to this listing. */
  readonly count: number;
  /** The current exchange's messages, after the settled ones (the caller's own array). */
  readonly tail: HistoryMessage[];
}

/**
 * A listing's messages as one array of the caller's own: the settled part,
 * then the current exchange's.
 *
 * @param listing what `HistoryModel.listing` returned
 * @returns a new array
 */
export function listedMessages(listing: Listing): HistoryMessage[] {
  const out = listing.settled.slice(0, listing.count);
  for (const message of listing.tail) out.push(message);
  return out;
}
