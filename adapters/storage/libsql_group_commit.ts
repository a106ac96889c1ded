/**
 * Group commit for the local libSQL store: commits that arrive while a group
 * is waiting to run (or is being retried after SQLITE_BUSY) are collected and
 * handed over together, so one write transaction — and, with
 * `synchronous=FULL`, one fsync of the WAL — serves many callers. Each commit
 * keeps its own outcome: the runner reports one result per commit.
 *
 * @module
 */

import type { CommitPlan, KvCommitResult } from "@floret/engine/spi";
import { storageFailure } from "./libsql_statements.ts";
import {
  type GroupBounds,
  type GroupOutcome,
  settleGroup,
  takeGroup,
  type WaitingCommit,
  waitingCommit,
} from "./commit_group.ts";

export type { GroupOutcome } from "./commit_group.ts";

/**
 * Runs one group in one transaction and returns one outcome per plan, in
 * order. Throwing (or rejecting) fails every commit of the group (nothing of
 * it landed). A runner that finished synchronously returns the outcomes
 * themselves, so the group settles without another promise hop.
 */
export type GroupRunner = (
  plans: readonly CommitPlan[],
) => GroupOutcome[] | Promise<GroupOutcome[]>;

/** Bounds on one group, and how groups of one start. */
export interface GroupLimits extends GroupBounds {
  /**
   * Most groups in a row that start without a loop turn, each after a group
   * of one (see {@link GroupCommitter}); 0 makes every group wait a turn.
   */
  loneRun: number;
}

/**
 * Defaults: large enough for 200 concurrent threads, small enough to keep
 * lock holds short; every group waits a loop turn.
 */
export const DEFAULT_GROUP_LIMITS: GroupLimits = {
  maxCommits: 256,
  maxBytes: 8 * 1024 * 1024,
  loneRun: 0,
};

const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown })
  .setImmediate;

/**
 * Calls `callback` on a later turn of the event loop, after every queued
 * promise job.
 *
 * @param callback what to run then
 */
export function onNextTurn(callback: () => void): void {
  if (immediate) immediate(callback);
  else setTimeout(callback, 0);
}

/** Resolves on a later turn of the event loop, after every queued promise job. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => onNextTurn(resolve));
}

/**
 * Queues commits and runs them in groups, one group at a time. A group
 * starts on the next turn of the event loop, so every caller whose commit is
 * already on its way (pending promise jobs) joins it.
 *
 * A sequential writer (its next commit waits for the last) would pay a loop
 * turn per commit and gain nothing from it. So after a group of one, the
 * next group starts as a promise job instead, after the jobs already queued:
 * every commit submitted before it still joins. At most
 * {@link GroupLimits.loneRun} groups in a row start that way; then one waits
 * a turn, so concurrent writers that happen to miss each other's groups
 * come together again (and after a group of several, the next waits a turn).
 */
export class GroupCommitter {
  readonly #run: GroupRunner;
  readonly #limits: GroupLimits;
  #waiting: WaitingCommit[] = [];
  #busy = false;
  // Groups started as promise jobs since the last one that waited a turn,
  // or -1 when the last group held several commits.
  #lone = -1;
  #drained: (() => void)[] = [];

  /**
   * @param run executes one group in one transaction
   * @param limits bounds on one group
   */
  constructor(run: GroupRunner, limits: GroupLimits = DEFAULT_GROUP_LIMITS) {
    this.#run = run;
    this.#limits = limits;
  }

  /**
   * Queues a commit for the next group.
   *
   * @param plan a validated commit
   * @returns its own result once its group's transaction committed
   * @throws {FloretError} `storage_failure` when its group, or its own writes, failed
   */
  submit(plan: CommitPlan): Promise<KvCommitResult> {
    return new Promise((resolve, reject) => {
      this.#waiting.push(waitingCommit(plan, resolve, reject));
      this.#schedule();
    });
  }

  /**
   * Waits until every commit submitted so far has settled.
   *
   * @returns when the queue is empty and no group runs
   */
  drain(): Promise<void> {
    if (!this.#busy && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  // Bound once: scheduling a group then allocates nothing but the queue entry.
  readonly #flushNow = (): void => this.#flush();

  #schedule(): void {
    if (this.#busy) return; // the running group schedules the next one when it ends
    this.#busy = true;
    if (this.#lone >= 0 && this.#lone < this.#limits.loneRun) {
      this.#lone += 1;
      queueMicrotask(this.#flushNow);
    } else {
      if (this.#lone > 0) this.#lone = 0;
      onNextTurn(this.#flushNow);
    }
  }

  #take(): WaitingCommit[] {
    return takeGroup(this.#waiting, this.#limits);
  }

  // A runner that finished synchronously (the usual case) settles its group
  // right here; only a retried group waits for its promise.
  #flush(): void {
    const group = this.#take();
    if (group.length > 1) this.#lone = -1;
    else if (this.#lone < 0) this.#lone = 0;
    let outcomes: GroupOutcome[] | Promise<GroupOutcome[]>;
    try {
      outcomes = this.#run(group.map((waiting) => waiting.plan));
    } catch (error) {
      this.#settle(group, error);
      return;
    }
    if (Array.isArray(outcomes)) this.#settle(group, undefined, outcomes);
    else {
      outcomes.then(
        (landed) => this.#settle(group, undefined, landed),
        (error) => this.#settle(group, error),
      );
    }
  }

  #settle(
    group: readonly WaitingCommit[],
    error: unknown,
    outcomes?: readonly GroupOutcome[],
  ): void {
    settleGroup(group, outcomes, error, commitFailure);
    if (this.#waiting.length > 0) {
      onNextTurn(this.#flushNow);
      return;
    }
    this.#busy = false;
    const drained = this.#drained;
    this.#drained = [];
    for (const resolve of drained) resolve();
  }
}

function commitFailure(error: unknown): unknown {
  return storageFailure(error, "commit");
}
