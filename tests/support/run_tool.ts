/**
 * Runs one tool call through the engine (scripted model, memory store) and
 * returns the tool result exactly as the model's next request carries it.
 */
import type { ToolDefinition } from "@floret/engine";
import { engine, sendAndWait } from "./engine.ts";

/** A tool result as the model sees it. */
export interface SeenResult {
  output: string;
  isError: boolean;
}

/**
 * Has the scripted model call `tool` once with `args`.
 *
 * @param tool the tool
 * @param args the call's arguments
 * @returns what the model was sent back
 */
export async function callTool(tool: ToolDefinition, args: unknown): Promise<SeenResult> {
  const e = await engine(
    [{ toolCalls: [{ name: tool.name, arguments: args }] }, { text: "done" }],
    { tools: [tool] },
  );
  try {
    const view = await sendAndWait(e, "go");
    const outcome = view.turns.at(-1)?.outcome;
    if (outcome !== "completed") throw new Error(`Turn ended ${outcome}`);
    const message = e.gateway.requests[1]?.messages.find((m) => m.role === "tool");
    if (!message || message.role !== "tool") throw new Error("The model saw no tool result");
    return { output: message.output, isError: message.isError === true };
  } finally {
    await e.host.shutdown();
  }
}
