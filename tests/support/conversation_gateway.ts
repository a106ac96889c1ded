/**
 * A stateless scripted model for the scale tests: it decides each answer from
 * the request alone, so a retried, resumed or restarted run gets the same
 * conversation as the first attempt, whatever faults came between. A user
 * message `tools:N <anything>` makes it call the `record` tool N times, one
 * call per step, then answer in text; any other message gets a text answer.
 * Call ids are random, so side effects can be counted per call across
 * processes.
 */
import { z } from "zod";
import { defineTool } from "@floret/engine";
import type {
  Gateway,
  ProviderEvent,
  ProviderRequest,
  ToolContext,
  ToolDefinition,
} from "@floret/engine";

/** Tool calls the conversation asks for after `message`. */
function wantedCalls(text: string): number {
  const match = /^tools:(\d+)/.exec(text);
  return match ? Number(match[1]) : 0;
}

/**
 * The gateway.
 *
 * @param options `delayMs` before each answer (lets other hosts and kills land mid-turn)
 */
export function conversationGateway(options: { delayMs?: () => number } = {}): Gateway {
  return {
    info: {
      provider: "scripted",
      model: "conversation",
      stateKey: "conversation",
      capabilities: { contextWindowTokens: 128_000 },
    },
    async *stream(request: ProviderRequest, { signal }): AsyncIterable<ProviderEvent> {
      const delay = options.delayMs?.() ?? 0;
      if (delay > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          }, { once: true });
        });
      }
      signal.throwIfAborted();
      const lastUser = request.messages.findLastIndex((message) => message.role === "user");
      const user = request.messages[lastUser];
      const wanted = user?.role === "user" ? wantedCalls(user.text) : 0;
      const done = request.messages.slice(lastUser + 1).filter((m) => m.role === "tool").length;
      if (done < wanted) {
        const callId = `call_${crypto.randomUUID()}`;
        yield { type: "tool-call-start", callId, name: "record" };
        yield {
          type: "tool-call-delta",
          callId,
          argumentsDelta: JSON.stringify({ step: done + 1 }),
        };
        yield { type: "tool-call-end", callId };
        yield { type: "finish", reason: "tool_calls" };
        return;
      }
      yield { type: "text", delta: `answer after ${done} calls` };
      yield { type: "finish", reason: "stop" };
    },
  };
}

/**
 * The `record` tool: a `write` whose side effect is `effect(callId)` (a
 * counter, or a line appended to a file another process reads).
 */
export function recordTool(
  effect: (callId: string) => void | Promise<void>,
): ToolDefinition<{ step: number }> {
  return defineTool({
    name: "record",
    description: "Records one side effect per call",
    input: z.object({ step: z.number() }),
    effect: "write",
    execute: async ({ step }, context: ToolContext) => {
      await effect(context.callId);
      return `recorded step ${step}`;
    },
  });
}
