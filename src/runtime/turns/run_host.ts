/**
 * The thread's side of one run (the engine's {@link RunHost}): every commit
 * the run makes takes the thread's lock briefly, first checks that the run
 * still owns the thread, and is planned again if another writer got there
 * first. Provider and tool I/O never hold the lock.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { NewCompaction } from "../../engine/compaction/compact.ts";
import type { NewResults, NewStep, RunHost } from "../../engine/run/run_loop.ts";
import type { Artifact, RunProgress } from "../../projection/view/view_types.ts";
import { newId } from "../../identity/ids.ts";
import type {
  NewEntry,
  SupplementalContext,
  TurnFailure,
  TurnOutcome,
} from "../../journal/entries.ts";
import { keys } from "../../journal/keys.ts";
import type { KvKey } from "../../spi/kv_store.ts";
import type {
  ObservationDetails,
  ObservationEvent,
  ObservationType,
} from "../../observation/events.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import type { InteractionsReader } from "../../projection/interactions.ts";
import type { OpenCallsReader } from "../../projection/open_calls.ts";
import type { ProviderMessage, Usage } from "../../provider/gateway.ts";
import { sumUsage } from "../../engine/run/usage_report.ts";
import { hasWork } from "../../engine/calls/batch_settlement.ts";
import type { StopSwitch } from "../../engine/attempt/step_abort.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ActiveRun } from "../actor/active_run.ts";
import { retryStaleNow } from "../actor/stale_retry.ts";
import { redactDeep } from "../actor/secret_redaction.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import type { AgentResolver } from "./turn_admission.ts";
import type { Equip } from "../../subagents/equip.ts";
import type { CollectChildEvents } from "../../subagents/parent_events.ts";
import { endTurn } from "./turn_end.ts";
import {
  goalNoteText,
  MAX_GOAL_REFLECTIONS,
  needsReflection,
  REFLECTION_NOTE,
} from "../../tools/goal_state.ts";

/** What runs need from the service. */
export interface RunDeps extends AgentResolver {
  observe(event: ObservationEvent): void;
  /** Whether the host listens to observation events at all. */
  observing: boolean;
  /** Runs started on a thread, `run` first (its lease needs keeping). */
  onRunStart(run: ActiveRun): void;
  /** The runs of a thread finished (the actor may be evicted from the cache). */
  onRunEnd(actor: ThreadActor): void;
  /** A run died on a failed commit: settle its turn once the store answers again. */
  settleWhenStoreAnswers(actor: ThreadActor): void;
  /** Adds built-in tools (sub-agents) to the agent a run uses on a thread. */
  equip?: Equip;
  /** Finds child facts a parent has not admitted yet (`parentEvents`). */
  childEvents?: CollectChildEvents;
}

/** One run's link to its thread. */
export class ThreadRunHost implements RunHost {
  readonly observing: boolean;
  readonly #actor: ThreadActor;
  readonly #run: ActiveRun;
  readonly #deps: RunDeps;
  #next: ActiveRun | undefined;
  #steered = false;

  /**
   * @param actor the thread
   * @param run the run, already the actor's
   * @param deps observation and agent resolution
   */
  constructor(actor: ThreadActor, run: ActiveRun, deps: RunDeps) {
    this.#actor = actor;
    this.#run = run;
    this.#deps = deps;
    this.observing = deps.observing;
  }

  // Getters: the run makes its signals on first read.
  get signal(): AbortSignal {
    return this.#run.providerSignal;
  }

  get toolSignal(): AbortSignal {
    return this.#run.toolSignal;
  }

  get supplementalContext(): readonly SupplementalContext[] | undefined {
    return this.#run.supplementalContext;
  }

  /** The turn's run labels, as its `turn_started` recorded them (`{}` when none). */
  get labels(): Readonly<Record<string, string>> {
    return this.#actor.history.labelsOf(this.#run.turnId);
  }

  /** The run of the queued turn this run's end handed over to, if any. */
  get handedOver(): ActiveRun | undefined {
    return this.#next;
  }

  // A getter: a reload replaces the actor's projections.
  get history(): HistoryReader {
    return this.#actor.history;
  }

  get interactions(): InteractionsReader {
    return this.#actor.interactions;
  }

  get openCalls(): OpenCallsReader {
    return this.#actor.openCalls;
  }

  toolSteerSignal(): AbortSignal {
    return this.#run.toolSteerSignal();
  }

  goalNote(): string | undefined {
    const goal = this.#actor.record.goal;
    return goal ? goalNoteText(goal) : undefined;
  }

  #reflections = 0;

  goalReflection(): NewEntry | undefined {
    if (this.#reflections >= MAX_GOAL_REFLECTIONS) return undefined;
    if (!needsReflection(this.#actor.record.goal)) return undefined;
    this.#reflections++;
    const { turnId, runId } = this.#run;
    return { kind: "note", turnId, runId, text: REFLECTION_NOTE };
  }

  stepSignal(): StopSwitch {
    return this.#run.stepSignal();
  }

  steerCount(): number {
    return this.#run.steers;
  }

  takeSteered(): boolean {
    const steered = this.#steered;
    this.#steered = false;
    return steered;
  }

  secrets(): ReadonlyMap<string, ProviderMessage> {
    return this.#run.secrets;
  }

  commitEntries(entries: NewEntry[], artifacts: Artifact[]): Promise<boolean> {
    if (entries.length === 0) return Promise.resolve(true);
    const stored = this.#scrubbed(entries);
    const set = this.#artifactValues(this.#scrubbed(artifacts));
    return this.#owned(() => this.#actor.commitLanded({ record: null, entries: stored, set }));
  }

  /**
   * What this run stores, with the secret answers it holds redacted: the
   * model may echo one in its text or pass it to a tool (the tool still gets
   * the real arguments: it runs from the calls in memory, not from the journal).
   */
  #scrubbed<T>(value: T): T {
    const run = this.#run;
    return run.holdsSecrets ? redactDeep(value, (text) => run.redact(text)) : value;
  }

  async park(): Promise<"parked" | "runnable" | "lost"> {
    let outcome: "parked" | "runnable" = "parked";
    const owned = await this.#owned(async () => {
      const actor = this.#actor;
      if (hasWork(actor.openCalls.list(), actor.interactions, this.#run.turnId)) {
        outcome = "runnable";
        return;
      }
      const { turnId, runId } = this.#run;
      const record: ThreadRecord = {
        ...actor.record,
        status: "waiting",
        waiting: { turnId, runId },
        updatedAt: nowIso(),
      };
      delete record.active;
      await actor.commit({ record });
      this.#run.dropPartial();
      this.#actor.setProgress(undefined);
      this.observe("turn.waiting", {});
    });
    return owned ? outcome : "lost";
  }

  stopRequested(): boolean {
    return this.#run.stopRequested;
  }

  threadUsage(): Usage {
    const turns = this.#actor.view.turns;
    const usages: (Usage | undefined)[] = new Array(turns.length);
    for (let i = 0; i < turns.length; i++) usages[i] = turns.at(i)?.usage;
    return sumUsage(usages);
  }

  progress(
    phase: "model" | "tools" | "retry_wait",
    step: number,
    attempt?: number,
    detail?: Pick<RunProgress, "request" | "retry">,
  ): void {
    const { turnId, runId } = this.#run;
    const progress: RunProgress = { turnId, runId, step, phase, attempt };
    if (detail?.request) progress.request = detail.request;
    if (detail?.retry) progress.retry = detail.retry;
    this.#actor.setProgress(progress);
  }

  liveDelta(step: number, kind: "thinking" | "assistant", delta: string): void {
    this.#run.streamed(step, kind, delta);
    // A secret can arrive split over deltas, each too short to be recognised: a run
    // that holds one shows only what no later delta can make part of a secret.
    const shown = this.#run.holdsSecrets ? this.#run.liveRelease(step, kind, delta) : delta;
    if (shown !== "") this.#actor.showLive(this.#run, step, kind, shown);
  }

  dropLive(step: number): void {
    this.#run.dropPartial();
    this.#actor.dropLive(this.#run, step);
  }

  commitStep(
    step: NewStep,
    end?: { outcome: TurnOutcome; steers?: number },
    also?: NewEntry[],
  ): Promise<boolean> {
    const entries = this.#scrubbed(
      also === undefined || also.length === 0 ? [step] : [step, ...also],
    );
    return this.#owned(() => {
      // A steer that arrived during the final step keeps the turn going.
      const steered = end?.steers !== undefined && end.steers !== this.#run.steers;
      if (end && !steered) return this.#end(entries, end.outcome);
      this.#steered = steered;
      const landed = this.#actor.commitLanded({ record: null, entries, fresh: true });
      if (landed instanceof Promise) return landed.then(this.#stepCommitted);
      this.#run.dropPartial();
    });
  }

  /** A step committed: its streamed text is in the journal now. Made once per run. */
  readonly #stepCommitted = dropPartialOf(this);

  /** Forgets what the run's step streamed (its text was committed or is void). */
  dropPartial(): void {
    this.#run.dropPartial();
  }

  commitResults(
    results: NewResults,
    artifacts: Artifact[],
    also?: NewEntry[],
  ): Promise<boolean> {
    const entries = this.#scrubbed(
      also === undefined || also.length === 0 ? [results] : [results, ...also],
    );
    const set = this.#artifactValues(this.#scrubbed(artifacts));
    return this.#owned(() => this.#actor.commitLanded({ record: null, entries, set, fresh: true }));
  }

  commitCompaction(entry: NewCompaction): Promise<boolean> {
    // The summary of a run's requests may restate a secret answer they carried.
    const entries = [this.#scrubbed(entry)];
    return this.#owned(() => this.#actor.commitLanded({ record: null, entries }));
  }

  #artifactValues(artifacts: Artifact[]): { key: KvKey; value: unknown }[] | undefined {
    if (artifacts.length === 0) return undefined;
    const threadId = this.#actor.threadId;
    return artifacts.map((artifact) => ({
      key: keys.artifact(threadId, artifact.id),
      value: artifact,
    }));
  }

  endTurn(outcome: TurnOutcome, failure?: TurnFailure): Promise<boolean> {
    // A failure may quote a provider's error (message, body, causes), which may echo the
    // request: no secret answer of this run reaches the journal through it.
    const recorded = failure && this.#scrubbed(failure);
    return this.#owned(() => this.#end([], outcome, recorded));
  }

  batchStarted(batch: Promise<unknown>): void {
    this.#run.trackBatch(batch);
  }

  async admitChildEvents(): Promise<boolean> {
    const collect = this.#deps.childEvents;
    if (!collect) return true;
    const { turnId, runId } = this.#run;
    const threadId = this.#actor.threadId;
    const found = await collect(threadId, this.#actor.history.admittedChildEvents);
    if (found.length === 0) return true;
    return await this.#owned(async () => {
      // Checked again under the lock: a fact is admitted once on the path.
      const admitted = this.#actor.history.admittedChildEvents;
      const events = found.filter((event) => !admitted.has(event.key));
      if (events.length === 0) return;
      await this.#actor.commit({
        record: null,
        entries: [{ kind: "child_events", turnId, runId, events }],
      });
    });
  }

  observe<K extends ObservationType>(type: K, detail: ObservationDetails[K]): void {
    // Events are built only when someone listens: this runs several times per step.
    if (!this.observing) return;
    const { turnId, runId } = this.#run;
    const at = nowIso();
    const run = this.#run;
    const shown = run.holdsSecrets ? redactStrings(detail, (text) => run.redact(text)) : detail;
    // `shown` is `detail` with strings redacted: the same fields, so the same event type.
    const event = { type, threadId: this.#actor.threadId, turnId, runId, at, ...shown };
    // The run's labels go with its events when it has any (they are the host's, never prompt text).
    const labels = this.#actor.history.labelsOf(turnId);
    for (const _ in labels) {
      (event as { labels?: Readonly<Record<string, string>> }).labels = labels;
      break;
    }
    this.#deps.observe(event as ObservationEvent);
  }

  newId(prefix: string): string {
    return newId(prefix);
  }

  async #end(entries: NewEntry[], outcome: TurnOutcome, failure?: TurnFailure): Promise<void> {
    const { turnId, runId } = this.#run;
    this.#next = await endTurn(
      this.#deps,
      this.#actor,
      { turnId, runId, outcome, failure },
      entries,
      (error) =>
        this.observe("queue.handover_failed", {
          message: error instanceof Error ? error.message : String(error),
        }),
    );
    this.#run.dropPartial();
    this.#actor.setProgress(undefined);
    // The detail is built only when someone listens (every turn ends here).
    if (this.observing) this.observe("turn.ended", { outcome, failureCode: failure?.code });
  }

  /**
   * Runs `change` under the lock while this run still owns the thread;
   * `false` once it does not (cancelled, deleted, taken over). A change that
   * finishes at once (a commit that landed in its own tick) takes the lock and
   * lets it go in the same tick: one settled promise, not one per layer.
   */
  #owned(change: () => void | Promise<void>): Promise<boolean> {
    const actor = this.#actor;
    return retryStaleNow(() => actor.exclusiveNow(() => this.#ifOwned(change)));
  }

  /** `change`, if this run still owns the thread: `true` once done, else `false`. */
  #ifOwned(change: () => void | Promise<void>): boolean | Promise<boolean> {
    if (!this.#actor.owns(this.#run)) return false;
    const done = change();
    return done instanceof Promise ? done.then(owned) : true;
  }
}

/** The callback that drops a run host's streamed text (made once per run, not per step). */
function dropPartialOf(host: ThreadRunHost): () => void {
  return () => host.dropPartial();
}

/** `detail` with `redact` applied to each string field (events are flat: ids, counts, messages). */
function redactStrings(
  detail: Record<string, unknown>,
  redact: (text: string) => string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(detail)) {
    out[key] = typeof value === "string" ? redact(value) : value;
  }
  return out;
}

function owned(): boolean {
  return true;
}
