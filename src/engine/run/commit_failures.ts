/**
 * Inside a run, a failed commit is the store's problem (the turn is settled
 * once the store answers again), while anything else that throws is a broken
 * contract (the turn fails with `engine_contract`). This wrapper marks every
 * commit's failure so the run loop can tell the two apart.
 *
 * @module
 */
import type { ObservationDetails, ObservationType } from "../../observation/events.ts";
import type {
  NewEntry,
  SupplementalContext,
  TurnFailure,
  TurnOutcome,
} from "../../journal/entries.ts";
import type { NewCompaction } from "../compaction/compact.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import type { InteractionsReader } from "../../projection/interactions.ts";
import type { OpenCallsReader } from "../../projection/open_calls.ts";
import type { NewResults, NewStep, RunHost } from "./run_loop.ts";
import type { Artifact, RunProgress } from "../../projection/view/view_types.ts";
import type { ProviderMessage, Usage } from "../../provider/gateway.ts";
import type { StopSwitch } from "../attempt/step_abort.ts";

/** Marks the failures of a run host's commits. */
export class CommitFailures {
  // Made at the first failure: a run whose commits all land needs none.
  #failures: WeakMap<object, unknown> | undefined;
  /** The step whose live text is showing, dropped when the turn fails. */
  liveStep: number | undefined;

  /**
   * The host with every commit's failure marked (and live steps tracked).
   *
   * @param host the thread's side of the run
   * @returns a host that delegates every call to `host`
   */
  wrap(host: RunHost): RunHost {
    return new MarkedHost(host, this);
  }

  /**
   * Runs a commit; its failure (thrown or rejected) becomes a marker error
   * that {@link causeOf} recognises.
   */
  mark<T>(commit: () => Promise<T>): Promise<T> {
    let pending: Promise<T>;
    try {
      pending = commit();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.catch(this.#marking);
  }

  /**
   * {@link mark} for a commit already started (the hot commits call the host
   * directly instead of through a closure per commit).
   *
   * @param pending the commit's promise
   * @returns the same outcome, its failure marked
   */
  marked<T>(pending: Promise<T>): Promise<T> {
    return pending.catch(this.#marking);
  }

  /** Turns a commit's error into its marker; made once per run. */
  readonly #marking = markingInto(this);

  /**
   * Records `marker` as the mark of a failed commit's `error`.
   *
   * @param marker the error the run loop sees
   * @param error the commit's own error
   */
  record(marker: object, error: unknown): void {
    (this.#failures ??= new WeakMap()).set(marker, error);
  }

  /**
   * The commit's own error when `error` marks a failed commit.
   *
   * @param error what the loop threw
   * @returns the commit's error, or `undefined` for anything else
   */
  causeOf(error: unknown): unknown {
    const failures = this.#failures;
    return failures !== undefined && typeof error === "object" && error !== null &&
        failures.has(error)
      ? failures.get(error)
      : undefined;
  }
}

/** The rejection handler that records each commit error under a new marker error. */
function markingInto(failures: CommitFailures): (error: unknown) => never {
  return (error) => {
    const marker = new Error("A commit of the run failed", { cause: error });
    failures.record(marker, error);
    throw marker;
  };
}

/**
 * The run host {@link CommitFailures.wrap} returns: every call goes to the
 * thread's host, commits through {@link CommitFailures.mark}. A class, not an
 * object literal of closures: every run makes one, and its methods live once
 * on the prototype.
 */
class MarkedHost implements RunHost {
  readonly #host: RunHost;
  readonly #failures: CommitFailures;
  readonly observing: boolean;
  // Optional, so an own property only when the host has it (sub-agent facts commit too).
  declare admitChildEvents?: () => Promise<boolean>;

  constructor(host: RunHost, failures: CommitFailures) {
    this.#host = host;
    this.#failures = failures;
    this.observing = host.observing;
    // The one method of the prototype, not a bound copy and a closure per run.
    if (host.admitChildEvents) this.admitChildEvents = this.#admitChildEvents;
  }

  /** The host's `admitChildEvents`, its failure marked (called as a method of this host). */
  #admitChildEvents(): Promise<boolean> {
    return this.#failures.mark(() => this.#host.admitChildEvents!());
  }

  // Read through: the host may make its signals on first read.
  get signal(): AbortSignal {
    return this.#host.signal;
  }

  get toolSignal(): AbortSignal {
    return this.#host.toolSignal;
  }

  get history(): HistoryReader {
    return this.#host.history;
  }

  // Memory only, set when the turn starts; read through so the host stays the owner.
  get supplementalContext(): readonly SupplementalContext[] | undefined {
    return this.#host.supplementalContext;
  }

  get labels(): Readonly<Record<string, string>> {
    return this.#host.labels;
  }

  get interactions(): InteractionsReader {
    return this.#host.interactions;
  }

  get openCalls(): OpenCallsReader {
    return this.#host.openCalls;
  }

  stepSignal(): StopSwitch {
    return this.#host.stepSignal();
  }

  steerCount(): number {
    return this.#host.steerCount();
  }

  takeSteered(): boolean {
    return this.#host.takeSteered();
  }

  secrets(): ReadonlyMap<string, ProviderMessage> {
    return this.#host.secrets();
  }

  commitEntries(entries: NewEntry[], artifacts: Artifact[]): Promise<boolean> {
    return this.#failures.mark(() => this.#host.commitEntries(entries, artifacts));
  }

  // Parking commits the `waiting` status: its failure is the store's too.
  park(): Promise<"parked" | "runnable" | "lost"> {
    return this.#failures.mark(() => this.#host.park());
  }

  stopRequested(): boolean {
    return this.#host.stopRequested();
  }

  toolSteerSignal(): AbortSignal | undefined {
    return this.#host.toolSteerSignal?.();
  }

  goalNote(): string | undefined {
    return this.#host.goalNote?.();
  }

  goalReflection(): NewEntry | undefined {
    return this.#host.goalReflection?.();
  }

  progress(
    phase: "model" | "tools" | "retry_wait",
    step: number,
    attempt?: number,
    detail?: Pick<RunProgress, "request" | "retry">,
  ): void {
    this.#host.progress(phase, step, attempt, detail);
  }

  liveDelta(step: number, kind: "thinking" | "assistant", delta: string): void {
    this.#failures.liveStep = step;
    this.#host.liveDelta(step, kind, delta);
  }

  dropLive(step: number): void {
    this.#host.dropLive(step);
  }

  commitStep(
    step: NewStep,
    end?: { outcome: TurnOutcome; steers?: number },
    also?: NewEntry[],
  ): Promise<boolean> {
    let pending: Promise<boolean>;
    try {
      pending = this.#host.commitStep(step, end, also);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return this.#failures.marked(pending);
  }

  commitResults(results: NewResults, artifacts: Artifact[], also?: NewEntry[]): Promise<boolean> {
    let pending: Promise<boolean>;
    try {
      pending = this.#host.commitResults(results, artifacts, also);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return this.#failures.marked(pending);
  }

  commitCompaction(entry: NewCompaction): Promise<boolean> {
    return this.#failures.mark(() => this.#host.commitCompaction(entry));
  }

  endTurn(outcome: TurnOutcome, failure?: TurnFailure): Promise<boolean> {
    return this.#failures.mark(() => this.#host.endTurn(outcome, failure));
  }

  batchStarted(batch: Promise<unknown>): void {
    this.#host.batchStarted(batch);
  }

  observe<K extends ObservationType>(type: K, detail: ObservationDetails[K]): void {
    this.#host.observe(type, detail);
  }

  threadUsage(): Usage | undefined {
    return this.#host.threadUsage?.();
  }

  newId(prefix: string): string {
    return this.#host.newId(prefix);
  }
}
