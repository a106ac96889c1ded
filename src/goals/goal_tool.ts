/**
 * The model's `goal` tool (agents with `goals: true`): `set` a new objective,
 * `review` progress with evidence, `complete` a reviewed goal. Each action is
 * one commit of the thread record, made in the thread's lock like a host
 * command; refusals are error results the model reads.
 *
 * @module
 */
import { z } from "zod";
import type { Agent } from "../config/agent.ts";
import { nowIso } from "../journal/now_iso.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import { retryStale } from "../runtime/actor/stale_retry.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import type { Equip } from "../subagents/equip.ts";
import { defineTool, type ToolContext, type ToolDefinition } from "../tools/define_tool.ts";
import { commitGoal } from "./goal_commands.ts";
import { goalCompleted, goalReviewed, goalSet, MAX_GOAL_TEXT } from "../tools/goal_state.ts";

/** The built-in goal tool's name; an agent with `goals` may not define a tool of this name. */
export const GOAL_TOOL = "goal";

const goalInput = z.object({
  action: z.enum(["set", "review", "complete"]).describe(
    "set: replace the objective (new version); review: record evidence of progress; " +
      "complete: mark the goal done (needs a review in this turn)",
  ),
  text: z.string().max(MAX_GOAL_TEXT).optional().describe("The objective (action set)"),
  evidence: z.string().optional().describe(
    "What shows the goal's progress or completion (action review)",
  ),
}).strict();

/**
 * The goal tool of one service: it commits through the thread's actor.
 *
 * @param ctx the service's context
 */
export function goalTool(ctx: ServiceContext): ToolDefinition {
  return defineTool({
    name: GOAL_TOOL,
    description: "Keep the thread's one clear objective. Set it when the user gives one, " +
      "review progress with evidence before you stop, and complete it only when reviewed " +
      "evidence shows it is done.",
    input: goalInput,
    effect: "none",
    execute: (input, context) => applyGoalAction(ctx, input, context),
  });
}

async function applyGoalAction(
  ctx: ServiceContext,
  input: z.infer<typeof goalInput>,
  context: ToolContext,
): Promise<{ output: string; isError?: boolean }> {
  return await ctx.actors.withActor(
    context.threadId,
    (actor) =>
      retryStale(() =>
        actor.exclusive(async () => {
          const current = actor.record.goal;
          if (input.action === "set") {
            if (input.text === undefined || input.text.trim() === "") {
              return { output: 'Action "set" needs the goal text.', isError: true };
            }
            const goal = goalSet(current, input.text);
            await commitGoal(actor, goal);
            return { output: `Goal set (version ${goal.version}).` };
          }
          const next = input.action === "review"
            ? goalReviewed(current, input.evidence ?? "", context.turnId, nowIso())
            : goalCompleted(current, context.turnId);
          if (typeof next === "string") return { output: next, isError: true };
          await commitGoal(actor, next);
          return {
            output: input.action === "review"
              ? `Review recorded for goal version ${next.version}.`
              : `Goal completed (version ${next.version}).`,
          };
        })
      ),
  );
}

/**
 * Adds the goal tool to agents with `goals`, after `inner`'s built-ins.
 *
 * @param ctx the service's context
 * @param inner the equipment it extends (sub-agent tools)
 */
export function goalEquipment(ctx: ServiceContext, inner?: Equip): Equip {
  const tool = goalTool(ctx);
  const cache = new WeakMap<Agent, Agent>();
  return (agent: Agent, record: ThreadRecord) => {
    const base = inner ? inner(agent, record) : agent;
    if (!agent.goals || base.tools.has(GOAL_TOOL)) return base;
    let equipped = cache.get(base);
    if (!equipped) {
      const tools = new Map(base.tools);
      tools.set(GOAL_TOOL, tool);
      equipped = { ...base, tools };
      cache.set(base, equipped);
    }
    return equipped;
  };
}
