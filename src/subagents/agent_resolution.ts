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

/** Resolves the agent of a turn on a thread. */
export type ResolveAgent = (threadId: string, turnId: string) => Promise<Agent>;

/**
 * Wraps the host's resolver so child threads run their recorded subagent.
 *
 * @param journal where thread records are read
 * @param resolveRoot the host's resolver, for root threads
 * @returns a resolver for every thread
 */
export function childAwareResolver(journal: Journal, resolveRoot: ResolveAgent): ResolveAgent {
  const resolve: ResolveAgent = async (threadId, turnId) => {
    const record = (await journal.thread(threadId))?.record;
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
