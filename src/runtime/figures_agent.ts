/**
 * The agent whose window and token counter a thread's context figures use
 * (`view().context`, `context()`) on a host opened with one `{ agent }`.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { isFloretError } from "../errors.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import type { AgentResolver } from "./turn_admission.ts";

/**
 * The host's agent for a root thread; for a sub-agent's child, the
 * `subagents` entry recorded at spawn, resolved as the child's turns resolve
 * it. Why: the host's agent is the parent's, whose window is not the child's,
 * so a restarted host (whose child actors have not run) showed the parent's
 * window and estimate where the live host showed the child's.
 *
 * @param resolver the host's agent resolution (child-aware)
 * @param record the thread's record
 * @param hostAgent the agent the host passed as `{ agent }`
 * @returns the agent, at once for a root thread; `undefined` when the
 *   child's parent agent no longer lists its sub-agent (the view still reads,
 *   without figures, and a turn there fails with the resolver's error)
 */
export function figuresAgent(
  resolver: AgentResolver,
  record: ThreadRecord,
  hostAgent: Agent,
): Agent | Promise<Agent | undefined> {
  if (!record.parentThreadId || record.agentId === undefined) return hostAgent;
  return resolver.resolveAgent(record.id, record.lastTurn?.turnId ?? "", record).catch(
    (error: unknown) => {
      if (isFloretError(error, "invalid_input")) return undefined;
      throw error;
    },
  );
}
