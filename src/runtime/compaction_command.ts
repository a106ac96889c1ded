/**
 * Manual compaction. Below the target size it is an explicit no-op: one
 * `noop` record, no provider request, no turn. Otherwise it admits a
 * compaction-only turn (so sends queue behind it, as behind any turn), waits
 * for it, and reports its outcome. Each request key is one operation. As in
 * the Go engine, a manual compaction that fails is observable (a `failed`
 * record, a failed compaction turn, an observation event) rather than
 * thrown: the call then answers `noop`, since nothing was installed.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { budgetOf } from "../context/budget.ts";
import { projectRequest } from "../engine/request_builder.ts";
import { FloretError } from "../errors.ts";
import { newId } from "../identity/ids.ts";
import type { NewEntry } from "../journal/entries.ts";
import type { ThreadView } from "../projection/view_types.ts";
import { driveRuns } from "./run_driver.ts";
import { claimOf, commandKey } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { settleOrphan } from "./settle_turn.ts";
import { threadCommand } from "./thread_command.ts";
import type { ThreadActor } from "./thread_actor.ts";
import { admitTurn, prepareTurn } from "./turn_admission.ts";

/** What `compact` returns. */
export interface CompactResult {
  outcome: "compacted" | "noop";
  view: ThreadView;
}

/**
 * Compacts a thread's context now, or does nothing below the target.
 *
 * @returns `compacted` when a checkpoint was installed, else `noop`
 * @throws {FloretError} `thread_busy` while a turn runs
 */
export async function compact(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
  staticAgent: Agent | undefined,
): Promise<CompactResult> {
  const { threadId, requestKey } = command;
  const key = await commandKey(command, "compact", {});
  const started = await threadCommand<{ noop: boolean; turnId?: string }>(ctx, {
    ...key,
    replay: (result) => ({ noop: result.outcome === "noop", turnId: result.turnId as string }),
    run: async (actor) => {
      await settleOrphan(actor);
      if (actor.record.active || actor.run) {
        throw new FloretError("thread_busy", `Thread is running a turn: ${threadId}`);
      }
      const prepared = await prepareTurn(ctx.runs, threadId, undefined);
      const agent = staticAgent ?? prepared.agent;
      actor.knowAgent(agent);
      const budget = budgetOf(agent);
      const estimate = projectRequest(agent, actor.history).estimate;
      if (!budget || estimate < budget.target) {
        const noop: NewEntry = {
          kind: "compaction",
          turnId: actor.record.lastTurn?.turnId ?? "",
          operationId: newId("compaction"),
          trigger: "manual",
          status: "noop",
          tokensBefore: estimate,
          reason: budget
            ? `The context is below the target: ${estimate} of ${budget.target} tokens`
            : "The agent's context window is unknown",
        };
        await actor.commit({
          record: null,
          entries: [noop],
          request: claimOf(key, { outcome: "noop" }),
        });
        return { noop: true };
      }
      ctx.gate.assertExecutable("compact");
      const run = await admitTurn(ctx.runs, actor, {
        requestKey,
        compaction: true,
        claim: (turnId) => claimOf(key, { turnId }),
      }, prepared);
      driveRuns(actor, run, ctx.runs);
      return { noop: false, turnId: run.turnId };
    },
  });
  const actor = await ctx.actors.get(threadId);
  if (started.noop) return { outcome: "noop", view: (await ctx.actors.fresh(threadId)).snapshot() };
  await settled(actor, started.turnId!);
  const record = actor.contextReader.recordOfTurn(started.turnId!);
  const outcome = record?.status === "compacted" ? "compacted" : "noop";
  return { outcome, view: actor.snapshot() };
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
