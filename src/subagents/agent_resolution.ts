/**
 * Which agent runs a turn on a child thread: the entry of its parent agent's
 * `subagents` named at spawn (recorded on the child). Only root threads ask
 * the host's `{ agent }` or `agentFactory`.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { FloretError } from "../errors.ts";
import type { Journal } from "../journal/journal.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";

/**
 * Resolves the agent of a turn on a thread. `known` is the thread's record as
 * the caller holds it (an actor's, inside its lock), when it has one.
 */
export type ResolveAgent = (
  threadId: string,
  turnId: string,
  known?: ThreadRecord,
) => Promise<Agent>;

/** The host's resolver for root threads: it never needs the record. */
export type ResolveRootAgent = (threadId: string, turnId: string) => Promise<Agent>;

/**
 * Wraps the host's resolver so child threads run their recorded subagent.
 *
 * @param journal where thread records are read
 * @param resolveRoot the host's resolver, for root threads
 * @returns a resolver for every thread
 */
export function childAwareResolver(
  journal: Journal,
  resolveRoot: ResolveRootAgent,
): ResolveAgent {
  const resolve: ResolveAgent = async (threadId, turnId, known) => {
    // A record's parentThreadId and agentId are written when it is created and never change
    // (every later record spreads the one before), so the caller's copy answers as well as a
    // read, which every turn admission would otherwise pay for.
    const record = known ?? (await journal.thread(threadId))?.record;
    if (!record?.parentThreadId || record.agentId === undefined) {
      return await resolveRoot(threadId, turnId);
    }
    const parent = (await journal.thread(record.parentThreadId))?.record;
    // The parent's own latest turn is what its agent was resolved for.
    const parentAgent = await resolve(record.parentThreadId, parent?.lastTurn?.turnId ?? turnId);
    const agent = parentAgent.subagents.get(record.agentId);
    if (!agent) {
      throw new FloretError(
        "invalid_input",
        `Agent ${parentAgent.id} no longer has the subagent this child runs: ${record.agentId}`,
      );
    }
    return agent;
  };
  return resolve;
}
