/**
 * The agent whose window and token counter a thread's context figures use
 * (`view().context`, `context()`) when no run of this host has told it yet.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import { isFloretError } from "../../errors.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { AgentResolver } from "../turns/turn_admission.ts";

/**
 * The host's agent for a root thread on a host opened with `{ agent }`;
 * otherwise the agent the thread's next turn would get: for a sub-agent's
 * child, the `subagents` entry recorded at spawn, and on a host opened with
 * `{ agentFactory }`, the factory's answer for the thread's last turn. Why: a
 * restarted host's actors have run nothing, so without this a child showed
 * the parent's window and a factory host's threads showed no figures (window
 * 0) where the live host showed them.
 *
 * @param resolver the host's agent resolution (child-aware, consulting the factory)
 * @param record the thread's record
 * @returns the agent, at once for a root thread of a one-agent host; `undefined`
 *   when it cannot be resolved for a reason that is the next turn's to report
 *   (the parent's agent no longer lists the child's sub-agent, or the host's
 *   factory throws): the view still reads, without figures
 * @throws {FloretError} what reading the store throws (`storage_failure`)
 */
export function figuresAgent(
  resolver: AgentResolver,
  record: ThreadRecord,
): Agent | Promise<Agent | undefined> {
  // The resolver's own answer without waiting (a one-agent host's root thread), as admissions use it.
  const now = resolver.agentNow?.(record);
  if (now !== undefined) return now;
  return resolver.resolveAgent(record.id, record.lastTurn?.turnId ?? "", record).catch(
    (error: unknown) => {
      // Host code (a factory) and a dropped sub-agent fail the next turn, where they are
      // reported; a read of figures is no place to raise them. The store's faults are.
      if (isFloretError(error) && error.code !== "invalid_input") throw error;
      return undefined;
    },
  );
}
