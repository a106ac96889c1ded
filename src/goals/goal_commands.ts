/**
 * The host's goal commands: `setGoal` and `deleteGoal` change the goal
 * without starting work (the next request sees it); `submitGoal` also admits
 * the goal's text as a user turn, in the same commit, when the thread is idle.
 *
 * @module
 */
import { nowIso } from "../journal/now_iso.ts";
import type { ThreadView, ViewOp } from "../projection/view/view_types.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import { claimOf, commandKeyNow, withKey } from "../runtime/commands/request_keys.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import { settleOrphan } from "../runtime/turns/settle_turn.ts";
import type { ThreadActor } from "../runtime/actor/thread_actor.ts";
import { threadCommand, viewCommand } from "../runtime/commands/thread_command.ts";
import { startTurn } from "../runtime/commands/turn_commands.ts";
import { goalSet, publicGoal, type StoredGoal } from "../tools/goal_state.ts";

/** The view op of a goal change (`null`: no goal). */
export function goalOps(record: ThreadRecord): ViewOp[] {
  return [{ op: "component", name: "goal", value: record.goal ? publicGoal(record.goal) : null }];
}

/**
 * Commits a new goal (or none) on the thread, in its lock, and publishes it.
 * Used by the host's commands and by the model's `goal` tool.
 */
export async function commitGoal(
  actor: ThreadActor,
  goal: StoredGoal | undefined,
  request?: ReturnType<typeof claimOf>,
): Promise<void> {
  const record: ThreadRecord = { ...actor.record, updatedAt: nowIso() };
  if (goal) record.goal = goal;
  else delete record.goal;
  await actor.commit({ record, request });
  actor.publisher.pushHeard(goalOps, actor.record);
}

/** Sets the goal (a new version, active, unreviewed) without starting work. */
export function setGoal(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; text: string },
): Promise<{ view: ThreadView }> {
  const { text } = command;
  return viewCommand(ctx, command, "setGoal", { text }, async (actor, key) => {
    await commitGoal(actor, goalSet(actor.record.goal, text), claimOf(key));
  });
}

/** Removes the goal (a no-op when there is none) without stopping work. */
export function deleteGoal(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
): Promise<{ view: ThreadView }> {
  return viewCommand(ctx, command, "deleteGoal", {}, async (actor, key) => {
    await commitGoal(actor, undefined, claimOf(key));
  });
}

/**
 * Sets the goal; on an idle thread also admits its text as a user turn in the
 * same commit. A busy thread gets the goal only (no queued work).
 */
export function submitGoal(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string; text: string },
): Promise<{ view: ThreadView; turnId?: string }> {
  const { text, requestKey } = command;
  return withKey(commandKeyNow(command, "submitGoal", { text }), (key) =>
    threadCommand(ctx, {
      threadId: key.threadId,
      requestKey: key.requestKey,
      op: key.op,
      fingerprint: key.fingerprint,
      replay(result, actor) {
        const turnId = typeof result.turnId === "string" ? result.turnId : undefined;
        return turnId === undefined
          ? { view: actor.snapshot() }
          : { view: actor.snapshot(), turnId };
      },
      async run(actor) {
        const goal = goalSet(actor.record.goal, text);
        if (!ctx.gate.deferred && actor.abandoned) await settleOrphan(actor);
        if (busy(actor)) {
          await commitGoal(actor, goal, claimOf(key, {}));
          return { view: actor.snapshot() };
        }
        ctx.gate.assertExecutable("submitGoal would start a turn");
        const turnId = await startTurn(ctx, actor, {
          requestKey,
          input: { text: goal.text },
          // The goal lands in the admission's own commit.
          after: (record) => ({ record: { ...record, goal }, entries: [] }),
          claim(id) {
            return claimOf(key, { turnId: id });
          },
        });
        actor.publisher.pushHeard(goalOps, actor.record);
        return { view: actor.snapshot(), turnId };
      },
    }));
}

function busy(actor: ThreadActor): boolean {
  return actor.record.status !== "idle" || actor.run !== undefined ||
    actor.record.active !== undefined || actor.record.waiting !== undefined;
}
