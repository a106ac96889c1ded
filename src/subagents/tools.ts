/**
 * The built-in tools of sub-agents: `spawn_agent`, `wait_agents`,
 * `inspect_agent` and `cancel_agent` for an agent with `subagents`, and
 * `report_to_parent` inside a child. Outputs are JSON text; every refusal
 * is an error result the model sees.
 *
 * @module
 */
import { z } from "zod";
import type { Agent } from "../config/agent.ts";
import {
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../tools/define_tool.ts";
import { REPORT_TOOL } from "./child_status.ts";
import { type ChildThreads, DEFAULT_WAIT_MS, MAX_WAIT_MS } from "./children.ts";
import { MAX_REPORT_BYTES } from "./bounds.ts";
import { utf8Length } from "../text/utf8_length.ts";

/**
 * The parent-side tools for `agent`, bound to the service's children capability.
 *
 * @param children the capability
 * @param agent the parent agent (its `subagents` are what `spawn_agent` may start)
 * @returns the four tools
 */
export function parentTools(children: ChildThreads, agent: Agent): ToolDefinition[] {
  const names = [...agent.subagents.keys()];
  const caller = (context: ToolContext) => ({
    threadId: context.threadId,
    callId: context.callId,
    signal: context.signal,
  });
  return [
    defineTool({
      name: "spawn_agent",
      description:
        "Start a child agent on a task in its own thread; returns its threadId at once. " +
        `Agents: ${names.join(", ")}.`,
      input: z.object({
        agent: z.string().describe("Which agent to start"),
        task: z.string().min(1).describe("The child's task, as its first message"),
        title: z.string().max(500).optional().describe("A title for the child thread"),
      }),
      effect: "none",
      execute: (input, context) =>
        guarded(async () => {
          const outcome = await children.spawn(caller(context), agent, input);
          return "error" in outcome
            ? { output: outcome.error, isError: true }
            : json({ threadId: outcome.threadId });
        }),
    }),
    defineTool({
      name: "wait_agents",
      description: "Wait until each child is done or needs input, then return each one's status " +
        "and report. Default wait 5 minutes, at most 30.",
      input: z.object({
        threadIds: z.array(z.string()).min(1).max(64),
        timeoutMs: z.number().int().min(0).optional(),
      }),
      // read-like: after a crash the call is cancelled and a retry waits again.
      effect: "read",
      execute: ({ threadIds, timeoutMs }, context) =>
        guarded(async () => {
          const wait = Math.min(timeoutMs ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
          const agents = await children.wait(caller(context), [...new Set(threadIds)], wait);
          return json({ agents });
        }),
    }),
    defineTool({
      name: "inspect_agent",
      description: "A child's status and a short preview of its output, without waiting.",
      input: z.object({ threadId: z.string() }),
      effect: "read",
      execute: ({ threadId }, context) =>
        guarded(async () => json(await children.inspect(caller(context), threadId))),
    }),
    defineTool({
      name: "cancel_agent",
      description: "Stop a child agent (and any agents it started).",
      input: z.object({ threadId: z.string() }),
      effect: "none",
      execute: ({ threadId }, context) =>
        guarded(async () => json(await children.cancel(caller(context), threadId))),
    }),
  ];
}

/** The child-side tool: the text becomes the report the parent reads. */
export const reportTool: ToolDefinition = defineTool({
  name: REPORT_TOOL,
  description: "Hand your result to the agent that started you. Your last report is what it " +
    `reads (at most ${MAX_REPORT_BYTES} bytes; longer reports are cut).`,
  input: z.object({ text: z.string() }),
  effect: "none",
  execute: ({ text }) => {
    const bytes = utf8Length(text);
    if (bytes <= MAX_REPORT_BYTES) return "Report delivered to the parent.";
    // Still the report (its head, marked as cut); the error tells the child so it can say it shorter.
    return {
      output: `Report too long: ${bytes} bytes, at most ${MAX_REPORT_BYTES}. The parent gets ` +
        "only its head, marked as cut. Call report_to_parent again with a shorter report " +
        "if the rest matters.",
      isError: true,
    };
  },
});

function json(value: unknown): string {
  return JSON.stringify(value);
}

/** Failures become error results that say why, without the engine's error class name. */
async function guarded(work: () => Promise<string | ToolResult>): Promise<string | ToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error && error.name === "AbortError") throw error;
    return { output: error instanceof Error ? error.message : String(error), isError: true };
  }
}
