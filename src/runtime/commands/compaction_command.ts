/**
 * Manual compaction. Below the target size it is an explicit no-op: one
 * `noop` record, no provider request, no turn. Otherwise it admits a
 * compaction-only turn (so sends queue behind it, as behind any turn), waits
 * for it, and reports its outcome. Each request key is one operation.
 *
 * The outcome says whether a checkpoint was installed: `compacted`, or
 * `noop` when nothing was. Below the target that is the explicit no-op of
 * the contract. A compaction that was tried and installed nothing (its
 * summary request failed, the summary was empty or saved nothing that fits,
 * or the turn was cancelled or its process stopped) changes nothing either,
 * so it also answers `noop`, the only other outcome the contract has;
 * `compaction` (the operation's record, `status: "failed"` with its reason)
 * tells it apart, as does the compaction turn in the view. The operation is
 * started in the turn's admission commit, so however the turn ends it has
 * its one record. Replays of the key answer the same. A new key tries again.
 *
 * @module
 */
import { budgetOf } from "../../context/budget.ts";
import { projectRequest } from "../../engine/attempt/request_builder.ts";
import { newId } from "../../identity/ids.ts";
import type { NewEntry } from "../../journal/entries.ts";
import type { CompactionRecord } from "../../projection/history/context_model.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { driveRuns } from "../turns/run_driver.ts";
import { claimOf, commandKeyNow, withKey } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { threadCommand } from "./thread_command.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import { admitTurn, prepareTurn } from "../turns/turn_admission.ts";
import { assertIdle } from "./turn_commands.ts";

/** What `compact` returns. */
export interface CompactResult {
  /** `compacted` when a checkpoint was installed, else `noop`. */
  outcome: "compacted" | "noop";
  /**
   * The operation's record, as `context().compactions` lists it: `failed`
   * (with its reason) tells a compaction that installed nothing from a
   * no-op. Absent only for a key claimed by an earlier release, which
   * recorded no operation id.
   */
  compaction?: CompactionRecord;
  /** The thread's view after the command. */
  view: ThreadView;
}

/**
 * Compacts a thread's context now, or does nothing below the target.
 *
 * @returns `compacted` when a checkpoint was installed, else `noop`, with the operation's record
 * @throws {FloretError} `thread_busy` while a turn runs or waits for an interaction (its
 *   turn is still open: the pending answer or approval belongs to the context being compacted)
 */
export async function compact(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; continueGoal?: boolean },
): Promise<CompactResult> {
  const { threadId, requestKey } = command;
  const continueGoal = command.continueGoal === true;
  // Keyed at once (see withKey): the command keeps its place among those issued without awaiting.
  const started = await withKey(
    commandKeyNow(command, "compact", continueGoal ? { continueGoal } : {}),
    (key) =>
      threadCommand<{ operationId?: string; turnId?: string; continued?: boolean }>(ctx, {
        ...key,
        replay: (result) => ({
          operationId: result.operationId as string | undefined,
          turnId: result.turnId as string | undefined,
          continued: continueGoal,
        }),
        run: async (actor) => {
          // A waiting turn is still open: its pending answer or approval belongs to the
          // context a compaction would rewrite (Go's CompactContext refuses it too).
          await assertIdle(actor);
          const prepared = await prepareTurn(ctx.runs, threadId, undefined);
          // The agent the compaction turn runs (a child's is its sub-agent, not the host's
          // agent): the no-op decision must use the budget that run would use.
          const agent = prepared.agent;
          actor.knowAgent(agent);
          const budget = budgetOf(agent);
          const projection = projectRequest(agent, actor.history);
          const estimate = projection.estimate;
          const operationId = newId("compaction");
          // `continueGoal` with an active goal: the turn goes on working on it afterwards.
          const goes = continueGoal && actor.record.goal?.status === "active";
          if (!budget || estimate < budget.target) {
            const noop: NewEntry = {
              kind: "compaction",
              turnId: actor.record.lastTurn?.turnId ?? "",
              operationId,
              trigger: "manual",
              status: "noop",
              tokensBefore: estimate,
              reason: budget
                ? `The context is below the target: ${estimate} of ${budget.target} tokens`
                : "The agent's context window is unknown",
            };
            await actor.commit({
              // The unchanged record is written again so that its version moves: this
              // commit holds no lease, and an append that keeps the version lets a second
              // host append at the same seq and overwrite this record's entry (its
              // operation would be lost). Same `updatedAt`: a no-op does not reorder `list`.
              record: actor.record,
              entries: [noop],
              request: goes ? undefined : claimOf(key, { outcome: "noop", operationId }),
            });
            if (goes) {
              // Nothing to compact: the goal's work starts at once, as a turn without input.
              ctx.gate.assertExecutable("compact");
              const run = await admitTurn(ctx.runs, actor, {
                requestKey,
                claim: (turnId) => claimOf(key, { outcome: "noop", turnId, operationId }),
              }, prepared);
              run.continueGoal = true;
              driveRuns(actor, run, ctx.runs);
              return { operationId, turnId: run.turnId, continued: true };
            }
            return { operationId };
          }
          ctx.gate.assertExecutable("compact");
          const run = await admitTurn(ctx.runs, actor, {
            requestKey,
            compaction: { operationId, tokensBefore: projection.projected },
            claim: (turnId) => claimOf(key, { turnId, operationId }),
          }, prepared);
          if (goes) run.continueGoal = true;
          driveRuns(actor, run, ctx.runs);
          return goes
            ? { turnId: run.turnId, operationId, continued: true }
            : { turnId: run.turnId, operationId };
        },
      }),
  );
  const actor = await ctx.actors.get(threadId);
  if (started.continued && started.turnId !== undefined) {
    // The turn goes on working on the goal: answer once the compaction is decided.
    const record = await compactionDecided(actor, started.turnId, started.operationId);
    const outcome = record?.status === "compacted" ? "compacted" : "noop";
    return withRecord({ outcome, view: actor.snapshot() }, record);
  }
  if (started.turnId === undefined) {
    // A no-op below the target; keys claimed before records were looked up carry no id.
    const fresh = await ctx.actors.fresh(threadId);
    const record = started.operationId === undefined
      ? undefined
      : fresh.contextReader.record(started.operationId);
    return withRecord({ outcome: "noop", view: fresh.snapshot() }, record);
  }
  await settled(actor, started.turnId);
  // Keys claimed by earlier releases name the turn only.
  const record = started.operationId === undefined
    ? actor.contextReader.recordOfTurn(started.turnId)
    : actor.contextReader.record(started.operationId);
  const outcome = record?.status === "compacted" ? "compacted" : "noop";
  return withRecord({ outcome, view: actor.snapshot() }, record);
}

function withRecord(result: CompactResult, record: CompactionRecord | undefined): CompactResult {
  if (record) result.compaction = record;
  return result;
}

/** Waits until the compaction turn is no longer running here. */
async function settled(actor: ThreadActor, turnId: string): Promise<void> {
  for (;;) {
    const run = actor.run;
    if (run?.turnId === turnId) {
      await run.done;
      continue;
    }
    if (actor.record.active?.turnId !== turnId) return;
    await actor.exclusive(() => actor.sync());
    if (actor.record.active?.turnId !== turnId) return;
    await actor.nextStatusChange();
  }
}

/**
 * The record of a `continueGoal` compaction once it is written (a no-op's at
 * once), or when its turn settled first (a cancel, a crash).
 */
async function compactionDecided(
  actor: ThreadActor,
  turnId: string,
  operationId: string | undefined,
): Promise<CompactionRecord | undefined> {
  for (;;) {
    const record = operationId === undefined
      ? actor.contextReader.recordOfTurn(turnId)
      : actor.contextReader.record(operationId);
    if (record) return record;
    if (actor.record.active?.turnId !== turnId && actor.run?.turnId !== turnId) return undefined;
    // A compaction writes no status change: look again shortly, or at the turn's end.
    await Promise.race([
      actor.nextStatusChange(),
      new Promise<void>((resolve) => setTimeout(resolve, 10)),
    ]);
  }
}
