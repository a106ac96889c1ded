/**
 * The overhead workload for Floret (the peers' `WORKLOAD.md`): the stateless
 * scripted gateway, the `add` tool and what a finished conversation reports
 * for verification. Shared by `overhead.ts`, `journal_growth.ts` and the profile.
 *
 * @module
 */
import { z } from "zod";
import {
  type Agent,
  defineAgent,
  defineTool,
  type Gateway,
  type ProviderEvent,
  type ProviderRequest,
  type ThreadView,
} from "@floret/engine";
import type { ConversationResult } from "./harness.mjs";
import { addHandler, nextAction, SYSTEM_PROMPT, toNumber } from "./script.mjs";

/**
 * The scripted model as a Floret gateway: stateless, built once, reads only
 * the last message, streams the tool call's arguments as one JSON string like
 * a real provider, and reports 1 input and 1 output token.
 */
export function scriptedAddGateway(n: number): Gateway {
  return {
    info: {
      provider: "bench",
      model: "scripted-zero-latency",
      stateKey: "bench:scripted-zero-latency",
      capabilities: { contextWindowTokens: 128_000 },
    },
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const last = request.messages[request.messages.length - 1];
      const action = nextAction(last.role === "tool" ? toNumber(last.output) : undefined, n);
      if (action.type === "tool") {
        const { callId, a, b } = action;
        yield { type: "tool-call-start", callId, name: "add" };
        yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify({ a, b }) };
        yield { type: "tool-call-end", callId };
        yield { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } };
        yield { type: "finish", reason: "tool_calls" };
      } else {
        yield { type: "text", delta: action.text };
        yield { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } };
        yield { type: "finish", reason: "stop" };
      }
    },
  };
}

/** The `add` tool: zod-validated input, returns the number (the engine stringifies it). */
export const addTool = defineTool({
  name: "add",
  description: "Add two numbers",
  input: z.object({ a: z.number(), b: z.number() }),
  // Floret's handler type is string | ToolResult; the engine JSON-encodes any
  // other value (tool_runner stringify), so the peers' handler returning a
  // number is kept as it is.
  execute: (input) => addHandler(input) as unknown as string,
});

/**
 * The workload's agent: the scripted gateway for `n` tool steps, the `add`
 * tool, the peers' system prompt, and room for the `n + 1` model calls.
 */
export function counterAgent(id: string, n: number): Agent {
  return defineAgent({
    id,
    systemPrompt: SYSTEM_PROMPT,
    gateway: scriptedAddGateway(n),
    tools: [addTool],
    maxSteps: n + 1,
  });
}

/** What the harness checks: the last item is the assistant's `done`, N completed tool items. */
export function summarize(view: ThreadView): ConversationResult {
  let tools = 0;
  for (const item of view.items) {
    if (item.kind === "tool" && item.tool?.status === "completed") tools++;
  }
  const last = view.items[view.items.length - 1];
  const finalText = last?.kind === "assistant"
    ? last.text
    : `<last item ${last?.kind}, status ${view.status}>`;
  return { finalText, toolResults: tools };
}
