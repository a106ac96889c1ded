/**
 * Group commit for the PostgreSQL store. At most {@link GroupLimits.lanes}
 * commit calls are on their way to the server at once; a commit that finds a
 * lane free goes at once, alone (a sequential writer pays nothing extra).
 * Commits that arrive while every lane is busy wait, and when a lane frees
 * they all go together as one call of `floret_kv_commit_many`: one round
 * trip, one transaction and one WAL flush for the whole group, where each
 * commit still gets its own checks and its own result.
 *
 * Why it pays although PostgreSQL already shares WAL flushes between
 * concurrent transactions: what a commit costs besides the flush — the
 * driver's work per query on our side, parsing, planning, a transaction and
 * a lock table round on the server's — is paid once per group. Measured on
 * the 2-core bench machine (bench/README.md, "Postgres group commit"; 3
 * interleaved passes each): 200 concurrent conversations went from 693 to
 * 282 µs per step (1,443 to 3,548 steps/s, 4.33x to 10.73x LangGraph +
 * PostgresSaver) and from 482 to 224 client CPU µs per step; sequential steps
 * did not move (3,315 vs 3,362 µs at N=10, 2,653 vs 2,564 at N=100).
 *
 * @module
 */

import type { CommitPlan, KvCommitResult } from "@floret/engine/spi";
import { storageFailure } from "./postgres_errors.ts";
import {
  type GroupBounds,
  type GroupOutcome,
  settleGroup,
  takeGroup,
  type WaitingCommit,
  waitingCommit,
} from "./commit_group.ts";

export type { GroupOutcome } from "./commit_group.ts";

/** The two calls a group commit makes. */
export interface CommitSender {
  /** Sends one commit alone. */
  one(plan: CommitPlan): Promise<KvCommitResult>;
  /**
   * Sends several commits in one call, applied one after another in order;
   * one outcome per plan. Rejecting fails every commit of the group.
   */
  many(plans: readonly CommitPlan[]): Promise<GroupOutcome[]>;
}

/** Bounds on group commit. */
export interface GroupLimits extends GroupBounds {
  /** Most commit calls in flight at once. */
  lanes: number;
}

/**
 * Defaults. Four lanes: with 200 concurrent writers on the bench machine, 4
 * lanes gave more commits/s than 2, 8 or 20 (fewer lanes make larger groups,
 * too few leave the server idle while a group's flush runs). 256 commits or
 * 8 MiB keep one group's lock hold and statement short.
 */
export const DEFAULT_GROUP_LIMITS: GroupLimits = {
  lanes: 4,
  maxCommits: 256,
  maxBytes: 8 * 1024 * 1024,
};

/** Sends commits alone while a lane is free, and in groups once all are busy. */
export class CommitLanes {
  readonly #send: CommitSender;
  readonly #limits: GroupLimits;
  #inFlight = 0;
  #waiting: WaitingCommit[] = [];

  /**
   * @param send makes the calls
   * @param limits bounds on lanes and groups
   */
  constructor(send: CommitSender, limits: GroupLimits = DEFAULT_GROUP_LIMITS) {
    this.#send = send;
    this.#limits = limits;
  }

  /**
   * Sends a commit now, or queues it for the next group.
   *
   * @param plan a validated commit
   * @returns its own result
   * @throws {FloretError} `storage_failure` when its call failed
   */
  submit(plan: CommitPlan): Promise<KvCommitResult> {
    if (this.#inFlight < this.#limits.lanes && this.#waiting.length === 0) {
      this.#inFlight += 1;
      const sent = this.#send.one(plan);
      sent.then(this.#release, this.#release);
      return sent;
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push(waitingCommit(plan, resolve, reject));
    });
  }

  // Bound once: a lane frees without allocating a closure per call.
  readonly #release = (): void => {
    this.#inFlight -= 1;
    this.#pump();
  };

  #pump(): void {
    while (this.#inFlight < this.#limits.lanes && this.#waiting.length > 0) {
      const group = this.#take();
      this.#inFlight += 1;
      this.#run(group).then(this.#release);
    }
  }

  #take(): WaitingCommit[] {
    return takeGroup(this.#waiting, this.#limits);
  }

  // Settles every commit of the group; never rejects.
  async #run(group: readonly WaitingCommit[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group;
      await this.#send.one(only.plan).then(only.resolve, only.reject);
      return;
    }
    let outcomes: GroupOutcome[];
    try {
      outcomes = await this.#send.many(group.map((waiting) => waiting.plan));
    } catch (error) {
      settleGroup(group, undefined, error, commitFailure);
      return;
    }
    settleGroup(group, outcomes, undefined, commitFailure);
  }
}

function commitFailure(error: unknown): unknown {
  return storageFailure(error, "commit");
}
