/**
 * The memory-only handle of a run executing in this process: its ids, its
 * abort switches, the tool batch in flight and the text its current step has
 * streamed. Nothing here is stored; the journal knows the run by its ids.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { FingerprintedSurface } from "../../engine/run/turn_surface.ts";
import type { SupplementalContext } from "../../journal/entries.ts";
import type { ProviderMessage } from "../../provider/gateway.ts";
import { SecretRedactor } from "./secret_redaction.ts";
import { StepAbort, type StopSwitch } from "../../engine/attempt/step_abort.ts";

/** Output streamed by the step in flight, kept so a cancel can show it. */
export interface PartialStep {
  step: number;
  text: string;
  reasoning: string;
}

/** A run in progress. */
export class ActiveRun {
  /** The turn it runs. */
  readonly turnId: string;
  /** Its id in the journal. */
  readonly runId: string;
  /** The turn's agent. */
  readonly agent: Agent;
  /** The operation of a compaction-only turn (manual `compact`), started at its admission. */
  readonly compaction?: string;
  /**
   * The surface recorded at the turn's admission, when the run must show it
   * instead of its live agent's (a wait, retry or restart of the turn).
   */
  surface?: FingerprintedSurface;
  /** A manual compaction with `continueGoal`: the turn goes on working on the goal afterwards. */
  continueGoal?: boolean;
  /** Context for this turn's requests only; memory only. */
  readonly supplementalContext?: readonly SupplementalContext[];
  /** Settles when the run has returned. */
  readonly done: Promise<void>;
  // Made on first need (a read of the signal, or a stop): an AbortController
  // is an EventTarget, costly to set up, and most runs never read these (the
  // tools' one is read only by a handler that looks at its signal, or by a
  // batch that does not settle at once).
  #providerAbort: AbortController | undefined;
  #toolAbort: AbortController | undefined;
  #stopRequested = false;
  #stoppedWhole = false;
  #batch: Promise<void> | undefined;
  #partial: PartialStep | undefined;
  #finished!: () => void;
  #stepAbort: StepAbort | undefined;
  #steers = 0;
  // Secret answers live here only: in the memory of the run that `respond` resumed.
  // Made at the first secret: most runs hold none.
  #secrets: Map<string, ProviderMessage> | undefined;
  #redactor: SecretRedactor | undefined;

  /**
   * @param turnId the admitted turn
   * @param runId the run's id
   * @param agent the turn's agent
   * @param supplementalContext context for this turn's requests only
   * @param compaction the operation, when the turn only compacts
   */
  constructor(
    turnId: string,
    runId: string,
    agent: Agent,
    supplementalContext?: readonly SupplementalContext[],
    compaction?: string,
  ) {
    this.turnId = turnId;
    this.runId = runId;
    this.agent = agent;
    if (compaction !== undefined) this.compaction = compaction;
    if (supplementalContext?.length) this.supplementalContext = supplementalContext;
    this.done = new Promise((resolve) => (this.#finished = resolve));
  }

  /**
   * Aborts the provider request (immediate and graceful cancel). Made on first
   * read: a run reads it only when something stops it or a compaction runs
   * (its steps check {@link stopRequested}, which every abort of it sets first).
   */
  get providerSignal(): AbortSignal {
    return (this.#providerAbort ??= new AbortController()).signal;
  }

  /** Aborts tool handlers (immediate cancel, shutdown, delete). */
  get toolSignal(): AbortSignal {
    return (this.#toolAbort ??= new AbortController()).signal;
  }

  /** A stop was asked for: the run returns at its next check. */
  get stopRequested(): boolean {
    return this.#stopRequested;
  }

  /**
   * The whole run was stopped (shutdown, delete, an immediate stop), not only
   * its provider request (a graceful cancel, which lets tools finish).
   */
  get stoppedWhole(): boolean {
    return this.#stoppedWhole;
  }

  /**
   * Tells the run to stop: it returns at its next check and commits nothing
   * more once its turn is no longer active. `provider` leaves running tools
   * alone (graceful cancel lets them finish).
   */
  stop(why: string, scope: "provider" | "all" = "all"): void {
    this.#stopRequested = true;
    if (scope === "all") this.#stoppedWhole = true;
    const reason = new DOMException(why, "AbortError");
    (this.#providerAbort ??= new AbortController()).abort(reason);
    this.#stepAbort?.abort(reason);
    if (scope === "all") (this.#toolAbort ??= new AbortController()).abort(reason);
  }

  /** Settles when the tool batch in flight (if any) has committed its results. */
  get batch(): Promise<void> | undefined {
    return this.#batch;
  }

  /** A tool batch started; a graceful cancel waits for it. */
  trackBatch(batch: Promise<unknown>): void {
    this.#batch = batch.then(noop, noop);
  }

  /**
   * What the step in flight has streamed so far (a cancel stores it), with
   * the secrets this run holds redacted.
   */
  get partial(): PartialStep | undefined {
    const partial = this.#partial;
    if (!partial || !this.holdsSecrets) return partial;
    return {
      ...partial,
      text: this.redact(partial.text),
      reasoning: this.redact(partial.reasoning),
    };
  }

  /** Keeps a streamed delta of `step`; a new step starts afresh. */
  streamed(step: number, kind: "thinking" | "assistant", delta: string): void {
    if (this.#partial?.step !== step) this.#partial = { step, text: "", reasoning: "" };
    if (kind === "assistant") this.#partial.text += delta;
    else this.#partial.reasoning += delta;
  }

  /** The streamed text is committed or void (a retry streams afresh). */
  dropPartial(): void {
    this.#partial = undefined;
    this.#liveShown = undefined;
  }

  // How much of the step's streamed text and reasoning a secret-holding run has shown live.
  #liveShown: { step: number; assistant: number; thinking: number } | undefined;

  /**
   * The part of what `step` streamed as `kind` (`delta` last) that can be
   * shown live now, redacted, and not shown before. A run without secrets shows each delta as
   * it comes; one that holds secrets keeps back the last characters, which a
   * delta still to come could make into a secret (a secret split over deltas).
   */
  liveRelease(step: number, kind: "thinking" | "assistant", delta: string): string {
    const partial = this.#partial;
    const redactor = this.#redactor;
    if (!partial || partial.step !== step || !redactor) return "";
    if (this.#liveShown?.step !== step) {
      // Everything before `delta` was shown as it came (the secret arrived during the step).
      const text = partial.text.length - (kind === "assistant" ? delta.length : 0);
      const reasoning = partial.reasoning.length - (kind === "thinking" ? delta.length : 0);
      this.#liveShown = { step, assistant: text, thinking: reasoning };
    }
    const streamed = kind === "assistant" ? partial.text : partial.reasoning;
    const tail = streamed.slice(this.#liveShown[kind]);
    const length = redactor.settledLength(tail);
    if (length === 0) return "";
    this.#liveShown[kind] += length;
    return redactor.redact(tail.slice(0, length));
  }

  /**
   * The switch of one provider request: aborted by a stop, or by a steer
   * (which ends the attempt but not the turn). A plain switch, not an
   * `AbortController`: only the engine watches it (the gateway gets the
   * attempt's own signal).
   */
  stepSignal(): StopSwitch {
    // A switch nobody aborted serves the next request as well as a new one
    // would (stop and steer abort it; watchers are removed after each
    // attempt), so a step only pays for a new one after an abort.
    if (this.#stepAbort && !this.#stepAbort.aborted) return this.#stepAbort;
    this.#stepAbort = new StepAbort();
    // A stop aborts the provider's controller right after setting the flag.
    if (this.#stopRequested) {
      this.#stepAbort.abort(this.providerSignal.reason);
    }
    return this.#stepAbort;
  }

  /** How many steering messages reached this run. */
  get steers(): number {
    return this.#steers;
  }

  /** A steering message was committed: the provider request in flight ends; the turn goes on. */
  steer(): void {
    this.#steers++;
    this.#stepAbort?.abort(new DOMException("Steered", "AbortError"));
    // A steer also ends the `read`/`none` calls of the batch in flight (DESIGN §11).
    this.#toolSteer?.abort(new DOMException("Steered", "AbortError"));
    this.#toolSteer = undefined;
  }

  #toolSteer: AbortController | undefined;

  /** A signal for the next tool batch that aborts when a steer arrives. */
  toolSteerSignal(): AbortSignal {
    this.#toolSteer = new AbortController();
    return this.#toolSteer.signal;
  }

  /**
   * The answers message with its secret values, for this run's requests only.
   * `values` are the raw secrets, kept so {@link redact} can keep them out of
   * what this run records or reports (a provider error may echo a request).
   */
  addSecret(interactionId: string, message: ProviderMessage, values: readonly string[]): void {
    (this.#secrets ??= new Map()).set(interactionId, message);
    const redactor = this.#redactor ??= new SecretRedactor();
    for (const value of values) redactor.add(value);
  }

  /**
   * `text` with every secret value this run holds, in any of its spellings
   * or any 12-character run of one, replaced by the redaction marker.
   */
  redact(text: string): string {
    return this.#redactor ? this.#redactor.redact(text) : text;
  }

  /** Whether this run holds secret values (so what it stores or reports needs {@link redact}). */
  get holdsSecrets(): boolean {
    return this.#redactor !== undefined && !this.#redactor.empty;
  }

  /** Secret-bearing replacements of answers messages, by interaction id. */
  get secrets(): ReadonlyMap<string, ProviderMessage> {
    return this.#secrets ?? NO_SECRETS;
  }

  /** The run has returned: {@link done} settles. */
  finished(): void {
    this.#finished();
  }
}

function noop(): void {}

/** What a run without secrets answers (read-only to every reader: the type says so). */
const NO_SECRETS: ReadonlyMap<string, ProviderMessage> = new Map();
