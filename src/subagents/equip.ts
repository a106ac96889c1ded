/**
 * Giving a run its built-in sub-agent tools: an agent with `subagents` gets
 * the parent-side tools, a child thread's agent gets `report_to_parent`. The
 * equipped agent is the host's agent with a larger tool map; it is built
 * once per agent and role and kept while the agent lives.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import type { ToolDefinition } from "../tools/define_tool.ts";
import type { ChildThreads } from "./children.ts";
import { parentTools, reportTool } from "./tools.ts";

/** Builds the agent a run uses on a thread: built-in tools added where they apply. */
export type Equip = (agent: Agent, record: ThreadRecord) => Agent;

/**
 * The equipment of one ThreadService.
 *
 * @param children the service's children capability
 * @returns the function run drivers call for each run
 */
export function subagentEquipment(children: ChildThreads): Equip {
  const cache = new WeakMap<Agent, Map<string, Agent>>();
  return (agent, record) => {
    const isChild = record.parentThreadId !== undefined;
    const isParent = agent.subagents.size > 0;
    if (!isChild && !isParent) return agent;
    const role = `${isParent}:${isChild}`;
    let byRole = cache.get(agent);
    if (!byRole) cache.set(agent, byRole = new Map());
    let equipped = byRole.get(role);
    if (!equipped) {
      const builtins: ToolDefinition[] = [
        ...(isParent ? parentTools(children, agent) : []),
        ...(isChild ? [reportTool] : []),
      ];
      const tools = new Map(agent.tools);
      // A host tool of the same name keeps its place; defineAgent refuses such names anyway.
      for (const tool of builtins) if (!tools.has(tool.name)) tools.set(tool.name, tool);
      equipped = { ...agent, tools };
      byRole.set(role, equipped);
    }
    return equipped;
  };
}
