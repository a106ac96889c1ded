/**
 * What the two group-commit schedulers share (libsql_group_commit.ts runs one
 * group at a time in a local transaction, postgres_group_commit.ts keeps a few
 * calls in flight): the queue entry of a waiting commit, how a group is taken
 * from the queue within its bounds, and how a group's outcomes reach their
 * callers, each commit on its own.
 *
 * @module
 */
import type { CommitPlan, KvCommitResult } from "@floret/engine/spi";

/** What became of one commit of a group: its result, or the error that failed only it. */
export type GroupOutcome = KvCommitResult | { error: unknown };

/** Bounds on one group, so a flood of commits never holds the write lock for long. */
export interface GroupBounds {
  /** Most commits in one group. */
  maxCommits: number;
  /** Most key and value bytes in one group (a larger single commit still goes alone). */
  maxBytes: number;
}

/** A commit waiting for its group, with the caller's promise. */
export interface WaitingCommit {
  plan: CommitPlan;
  /** Its key and value bytes, counted once when it was queued. */
  bytes: number;
  resolve: (result: KvCommitResult) => void;
  reject: (error: unknown) => void;
}

/**
 * A queue entry for `plan`.
 *
 * @param plan a validated commit
 * @param resolve settles the caller's promise with the commit's result
 * @param reject settles it with the commit's failure
 * @returns the entry
 */
export function waitingCommit(
  plan: CommitPlan,
  resolve: (result: KvCommitResult) => void,
  reject: (error: unknown) => void,
): WaitingCommit {
  let bytes = 0;
  for (const check of plan.checks) bytes += check.key.length;
  for (const write of plan.writes) bytes += write.key.length + (write.value?.length ?? 0);
  return { plan, bytes, resolve, reject };
}

/**
 * Takes the next group off the front of `queue`: as many commits as the
 * bounds allow, and always at least one.
 *
 * @param queue the waiting commits, oldest first (changed in place)
 * @param bounds the group's bounds
 * @returns the group, in queue order
 */
export function takeGroup(queue: WaitingCommit[], bounds: GroupBounds): WaitingCommit[] {
  let count = 0;
  let bytes = 0;
  for (const waiting of queue) {
    if (count >= bounds.maxCommits) break;
    if (count > 0 && bytes + waiting.bytes > bounds.maxBytes) break;
    count += 1;
    bytes += waiting.bytes;
  }
  return queue.splice(0, count);
}

/**
 * Settles every commit of a group: each with its own outcome, or all with
 * the failure of the group as a whole (nothing of it landed).
 *
 * @param group the group's commits, in the order they were sent
 * @param outcomes one outcome per commit, or `undefined` when the group failed
 * @param groupError why the group failed (read only when `outcomes` is undefined)
 * @param failure turns an error into the adapter's `storage_failure`
 */
export function settleGroup(
  group: readonly WaitingCommit[],
  outcomes: readonly GroupOutcome[] | undefined,
  groupError: unknown,
  failure: (error: unknown) => unknown,
): void {
  if (outcomes === undefined) {
    const failed = failure(groupError);
    for (const waiting of group) waiting.reject(failed);
    return;
  }
  group.forEach((waiting, i) => {
    const outcome = outcomes[i];
    if (outcome === undefined) waiting.reject(failure(new Error("a commit has no outcome")));
    else if ("error" in outcome) waiting.reject(failure(outcome.error));
    else waiting.resolve(outcome);
  });
}
