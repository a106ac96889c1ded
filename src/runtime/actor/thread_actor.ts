/**
 * One actor per active thread in this process: it serialises the thread's
 * commands, holds the thread's projections (view, provider history, open
 * calls) and applies every commit to them, so the journal stays the one truth
 * and memory is only its cache.
 *
 * @module
 */
import { CommandLock } from "./command_lock.ts";
import { StatusWakeup } from "./status_wakeup.ts";
import { FloretError } from "../../errors.ts";
import type { Entry } from "../../journal/entries.ts";
import type { Agent } from "../../config/agent.ts";
import type { ContextReader } from "../../projection/history/context_model.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";
import { viewContext } from "./context_figures.ts";
import type { Journal, VersionedRecord } from "../../journal/journal.ts";
import type { OpenCallsReader } from "../../projection/open_calls.ts";
import type { InteractionsReader } from "../../projection/interactions.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { titleKeyOf, titleOps } from "../../projection/view/title_state.ts";
import { ThreadProjections } from "../../projection/thread_projections.ts";
import { consistentRead } from "../../journal/consistent_read.ts";
import { readThread } from "./thread_read.ts";
import type { ViewReader } from "../../projection/view/view_model.ts";
import type { Publisher } from "./publisher.ts";
import { UnstoredHoldings } from "./unstored_holdings.ts";
import { queuedView, ViewContextCache, type ViewFigures, viewSnapshot } from "./view_snapshot.ts";
import type { ActiveRun } from "./active_run.ts";
import { StaleThreadError } from "./stale_retry.ts";
import type { RunProgress, ThreadStatus, ThreadView } from "../../projection/view/view_types.ts";
import { progressOps, statusOps } from "./actor_ops.ts";
import { canSettleAbandoned, type Ownership } from "./ownership.ts";
import { type ActorChange, stampChange } from "./actor_change.ts";

export type { ActorChange } from "./actor_change.ts";

/** The outcome of every commit that landed in its own tick (settled promises are immutable). */
const LANDED: Promise<void> = Promise.resolve();

/** The in-process owner of one thread. */
export class ThreadActor {
  readonly threadId: string;
  readonly journal: Journal;
  readonly publisher: Publisher;
  readonly ownership: Ownership;
  // Invariants, kept by the methods below and nowhere else: a run is set from
  // the commit that admits its turn (beginRun checks the record) until it
  // returns or loses the turn (a cancel or a reload detaches and stops it);
  // only a run whose turn is still active may write (owns); progress belongs
  // to the current run; `stopping` holds only while a cancel is under way.
  #run: ActiveRun | undefined;
  #runProgress: RunProgress | undefined;
  #stopping = false;
  // The agent that last ran here (or the host's only agent): context figures need its window.
  #agent: Agent | undefined;
  #projections!: ThreadProjections;
  #current!: VersionedRecord;
  #lastSeq = 0;
  readonly #statusChange = new StatusWakeup();
  /** A commit failed: memory may differ from the store until the next read. */
  #unsure = false;
  readonly #onCommitFailed: ((actor: ThreadActor) => void) | undefined;
  /** What this process holds for the thread that is never stored (lost with the process). */
  readonly unstored: UnstoredHoldings = new UnstoredHoldings();

  private constructor(
    threadId: string,
    journal: Journal,
    publisher: Publisher,
    ownership: Ownership,
    onCommitFailed: ((actor: ThreadActor) => void) | undefined,
  ) {
    this.threadId = threadId;
    this.journal = journal;
    this.publisher = publisher;
    this.ownership = ownership;
    this.#onCommitFailed = onCommitFailed;
  }

  /**
   * Loads a thread from the journal; `null` when it does not exist or is deleted.
   *
   * @param onCommitFailed told when a commit of this actor throws (its outcome is unknown)
   */
  static async load(
    journal: Journal,
    threadId: string,
    publisher: Publisher,
    ownership: Ownership,
    onCommitFailed?: (actor: ThreadActor) => void,
  ): Promise<ThreadActor | null> {
    const actor = new ThreadActor(threadId, journal, publisher, ownership, onCommitFailed);
    return (await actor.#reload()) ? actor : null;
  }

  /**
   * The actor of a thread this process has just created with no entries and no
   * fork base, from the record and version its creating commit wrote: the state
   * a load would read back, without reading it (a later commit's version check
   * still catches any writer that came in between).
   */
  static created(
    journal: Journal,
    created: VersionedRecord,
    publisher: Publisher,
    ownership: Ownership,
    onCommitFailed?: (actor: ThreadActor) => void,
  ): ThreadActor {
    const record = created.record;
    if (record.base || record.seq !== 0) {
      throw new Error(`Thread ${record.id} has entries: it must be loaded, not created`);
    }
    const actor = new ThreadActor(record.id, journal, publisher, ownership, onCommitFailed);
    actor.#install(created, new ThreadProjections(publisher), 0);
    return actor;
  }

  /** The host's view of the thread (items, turns, live overlay). */
  get view(): ViewReader {
    return this.#projections.view;
  }

  /** The provider history of the thread's path. */
  get history(): HistoryReader {
    return this.#projections.history;
  }

  /** Compaction records and usage of the thread's path. */
  get contextReader(): ContextReader {
    return this.#projections.context;
  }

  /** The agent whose window the context figures use, when known. */
  get agent(): Agent | undefined {
    return this.#agent;
  }

  /** Names the agent for context figures (the host's agent, before any run here). */
  knowAgent(agent: Agent): void {
    this.#agent ??= agent;
  }

  /** Calls of the active turn without a result. */
  get openCalls(): OpenCallsReader {
    return this.#projections.openCalls;
  }

  /** Approvals and questions of the path. */
  get interactions(): InteractionsReader {
    return this.#projections.interactions;
  }

  /** The record as last committed or read. */
  get record(): ThreadRecord {
    return this.#current.record;
  }

  /** The record with its version, as a commit expects it. */
  get versioned(): VersionedRecord {
    return this.#current;
  }

  /** The status a host sees. */
  get status(): ThreadStatus {
    if (this.record.status === "running" && this.#stopping) return "stopping";
    return this.record.status;
  }

  /**
   * Runs `fn` after every earlier command of this thread has finished. After
   * a failed commit, the thread is read again first: the commit may have
   * landed (its reply lost), and only the store can say.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.#lock.run(fn);
  }

  /**
   * {@link exclusive}, except that a command finding the lock free and finishing at once gives
   * its value back as it is, with no promise made for it (see `CommandLock.runNow`).
   */
  exclusiveNow<T>(fn: () => T | Promise<T>): T | Promise<T> {
    return this.#lock.runNow(fn);
  }

  readonly #lock = new CommandLock(() => this.#unsure, () => this.#reload());

  /** Nothing runs, waits or listens: the actor may be dropped from memory. */
  get quiet(): boolean {
    return !this.#lock.busy && !this.#run && !this.record.active &&
      !this.publisher.hasSubscribers && this.unstored.empty;
  }

  /**
   * Commits a change planned on the current record; entries get their `seq`
   * and timestamp here. Must run inside {@link exclusive}.
   *
   * @throws {StaleThreadError} when another writer got there first (the actor has reloaded)
   */
  commit(change: ActorChange): Promise<void> {
    let landed: void | Promise<void>;
    try {
      landed = this.commitLanded(change);
    } catch (error) {
      return Promise.reject(error);
    }
    return landed instanceof Promise ? landed : LANDED;
  }

  /**
   * {@link commit}, except that a commit landing in this tick (the memory store) returns nothing
   * and its failure throws: hot callers go on at once. Must run inside {@link exclusive}.
   */
  commitLanded(change: ActorChange): void | Promise<void> {
    // Not async: every step commits twice, and the journal's promise serves as is.
    const { entries, record, seq } = stampChange(change, this.#lastSeq, this.ownership);
    const threadCommit = {
      expected: this.#current,
      record,
      entries,
      request: change.request,
      set: change.set,
      delete: change.delete,
    };
    if (this.journal.commitsNow) {
      // A synchronous store (memory): land in this tick, with no promise at all.
      let version: string | null;
      try {
        version = this.journal.commitNow(threadCommit);
      } catch (error) {
        throw this.#failed(error);
      }
      return this.#landed(version, record, entries, seq);
    }
    return this.journal.commit(threadCommit).then(
      (version) => this.#landed(version, record, entries, seq),
      (error: unknown) => {
        throw this.#failed(error);
      },
    );
  }

  /** A commit failed: whether it landed is unknown until the thread is read again. */
  #failed(error: unknown): unknown {
    this.#unsure = true;
    this.#onCommitFailed?.(this);
    return error;
  }

  /** Applies a commit's outcome: a refusal reloads and throws {@link StaleThreadError}. */
  #landed(
    version: string | null,
    record: ThreadRecord | null,
    entries: Entry[],
    seq: number,
  ): void | Promise<void> {
    if (version === null) {
      return this.#reload().then(() => {
        throw new StaleThreadError(this.threadId);
      });
    }
    const statusBefore = this.status;
    if (record) this.#current = { record, version };
    this.#lastSeq = seq;
    for (const entry of entries) this.#projections.apply(entry);
    if (entries.length > 0 && this.#agent && this.publisher.hasSubscribers) {
      const value = this.#viewContext(this.#agent);
      this.publisher.push({ op: "component", name: "context", value });
    }
    // An append (every step of a run) keeps the record, so the status cannot have moved, nor
    // the title, unless a pending claim's deadline passed meanwhile (titleStateOf reads the clock).
    if (record || this.record.titleStatus === "pending") {
      const titleKey = titleKeyOf(this.record);
      if (titleKey !== this.#titleShown) this.#publishTitle(titleKey);
    }
    if (record && this.status !== statusBefore) this.publishStatus();
  }

  /** The seq of the last entry on this thread's path. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Publishes the status and queue components and wakes status waiters. */
  publishStatus(): void {
    this.publisher.pushHeard(statusOps, this);
    this.#statusChange.wakeAll();
  }

  /** The run executing now, if this process runs the thread's active turn. */
  get run(): ActiveRun | undefined {
    return this.#run;
  }

  /** Whether `run` may still write: it is this actor's run and its turn is still active. */
  owns(run: ActiveRun): boolean {
    return this.#run === run && this.record.active?.runId === run.runId;
  }

  /**
   * Takes on the run of the turn just admitted. Call inside {@link exclusive},
   * right after the admission commit.
   *
   * @throws {Error} when the run's turn is not the active one (an engine bug)
   */
  beginRun(run: ActiveRun): void {
    if (this.record.active?.runId !== run.runId) {
      throw new Error(`Run ${run.runId} is not the active run of thread ${this.threadId}`);
    }
    this.#run = run;
    this.#agent = run.agent;
    this.#stopping = false;
    this.unstored.handSecretsTo(run);
  }

  /** The run returned; if it is still this actor's run, the actor lets it go and says so. */
  endRun(run: ActiveRun): void {
    if (this.#run !== run) return;
    this.#run = undefined;
    this.setProgress(undefined);
    this.publishStatus();
  }

  /** A cancel has started: the status reads `stopping` until {@link stopSettled}. */
  markStopping(): void {
    this.#stopping = true;
    this.publishStatus();
  }

  /** A cancel could not commit: `stopping` ends and the run goes on. */
  stopFailed(): void {
    this.#stopping = false;
    this.publishStatus();
  }

  /** A cancel has committed: `stopping` ends; `run`, if still ours, stops and is let go. */
  stopSettled(run: ActiveRun | undefined, why: string): void {
    this.#stopping = false;
    if (run && this.#run === run) this.#detach(why);
    this.setProgress(undefined);
    this.publishStatus();
  }

  /** Grows the live item of the run's streaming step; a run let go (cancelled) shows nothing. */
  showLive(run: ActiveRun, step: number, kind: "thinking" | "assistant", delta: string): void {
    if (this.#run !== run) return;
    this.#projections.view.liveDelta(run.turnId, run.runId, step, kind, delta);
  }

  /** Removes the live items of a step whose attempt failed. */
  dropLive(run: ActiveRun, step: number): void {
    this.#projections.view.dropLive(run.runId, step);
  }

  /** Publishes memory-only run progress. */
  setProgress(progress: RunProgress | undefined): void {
    this.#runProgress = progress;
    this.publisher.pushHeard(progressOps, progress);
  }

  /** Resolves at the next status change. */
  nextStatusChange(): Promise<void> {
    return this.#statusChange.next();
  }

  /** Wakes status waiters without a change (shutdown: they must learn the host closed). */
  wakeStatusWaiters(): void {
    this.#statusChange.wakeAll();
  }

  /** The queue as hosts see it. */
  queueView(): ThreadView["queue"] {
    return this.record.queue.map(queuedView);
  }

  /** A consistent copy of the view, covering every update published so far. */
  snapshot(): ThreadView {
    this.publisher.flush();
    return viewSnapshot({
      record: this.record,
      status: this.status,
      view: this.view,
      interactions: this.interactions,
      viewVersion: this.publisher.version,
      runProgress: this.#runProgress,
      context: this.#agent ? this.#viewContext(this.#agent) : undefined,
    });
  }

  readonly #contextCache = new ViewContextCache();

  #viewContext(agent: Agent): ViewFigures {
    return this.#contextCache.figures(
      this.#projections,
      this.#lastSeq,
      agent,
      () => viewContext(this.history, this.contextReader, agent),
    );
  }

  #titleShown: string | undefined;

  #publishTitle(titleKey: string): void {
    this.#titleShown = titleKey;
    this.publisher.pushHeard(titleOps, this.record);
  }

  /**
   * Re-reads the record and the whole path; subscribers are told to resync.
   * A read that contradicts what this host knows is read again, then refused
   * (`storage_failure`): it never replaces the state held (consistent_read.ts).
   */
  async #reload(): Promise<boolean> {
    const known = this.#current ? this.#lastSeq : undefined;
    const read = await consistentRead(
      () => readThread(this.journal, this.threadId, this.publisher, known),
      `thread ${this.threadId}`,
    );
    if (!read) {
      // Deleted meanwhile (possibly by another host): every later command sees thread_not_found.
      if (this.#current) {
        const record = { ...this.#current.record, deleted: true };
        delete record.active;
        this.#current = { ...this.#current, record };
        this.#releaseLostRun();
        // Its subscriptions end, as a delete on this host ends them (else they wait forever).
        this.publisher.close();
      }
      return false;
    }
    this.#install(read.current, read.projections, read.last);
    return true;
  }

  /** Takes on a thread's state as read (or as its creating commit wrote it). */
  #install(current: VersionedRecord, projections: ThreadProjections, lastEntrySeq: number): void {
    // Only a reload replaces state a subscriber may have seen. At the first
    // load nobody can hold a view of this actor (a view loads it first), and
    // a subscriber that registered before it (subscribe, then view) is behind
    // nothing: a resync would end its HTTP events stream right after the view.
    const replacing = this.#projections !== undefined;
    this.#unsure = false;
    this.#projections = projections;
    this.#current = current;
    this.#titleShown = titleKeyOf(current.record);
    this.#lastSeq = Math.max(current.record.seq, lastEntrySeq);
    this.publisher.touch();
    this.#releaseLostRun();
    if (replacing) this.publisher.resyncAll("thread reloaded from the journal");
    this.#statusChange.wakeAll();
  }

  /** A local run whose turn another host ended (say, cancelled) must stop: it can commit nothing more. */
  #releaseLostRun(): void {
    const run = this.#run;
    if (!run || this.record.active?.runId === run.runId) return;
    this.#detach("The turn was ended by another host");
  }

  #detach(why: string): void {
    this.#run?.stop(why);
    this.#run = undefined;
    this.#runProgress = undefined;
  }

  /** Re-reads after an error whose effect on the store is unknown. */
  async refresh(): Promise<boolean> {
    return await this.#reload();
  }

  /** The active turn has no run here and its owner is gone (or is this host, restarted). */
  get abandoned(): boolean {
    // A graceful stop of this host settles its own turn (graceful_stop.ts), observed.
    return !this.#run && !this.#stopping && canSettleAbandoned(this.record, this.ownership);
  }

  /** The active turn runs on another host, whose lease is live. */
  get runningElsewhere(): boolean {
    return !this.#run && !!this.record.active &&
      !canSettleAbandoned(this.record, this.ownership);
  }

  /** Catches up with other hosts' writes (reloads on a new version); inside {@link exclusive}. */
  async sync(): Promise<boolean> {
    // The version alone tells: a record is rewritten only with a new version.
    if (await this.journal.threadVersion(this.threadId) === this.#current.version) return true;
    return await this.#reload();
  }

  /** Fails with `thread_not_found` when the thread was deleted meanwhile. */
  assertLive(): void {
    if (this.record.deleted) {
      throw new FloretError("thread_not_found", `Thread not found: ${this.threadId}`);
    }
  }
}
