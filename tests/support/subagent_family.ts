/**
 * The agents of the sub-agent crash tests, shared by the child process that
 * is killed and by the test that reopens what it left: a lead that spawns
 * one `worker` and waits for it, each with a gateway the caller scripts.
 */
import { z } from "zod";
import {
  type Agent,
  defineAgent,
  defineTool,
  type Gateway,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";
import { type DynamicStep, scriptedGateway, type ScriptStep } from "@floret/engine/testing";
import { toolOutputs } from "./subagents.ts";

/** The lead's spawn call; the same call id in every process (a replayed step). */
export const SPAWN = {
  name: "spawn_agent",
  callId: "call-spawn",
  arguments: { agent: "worker", task: "dig" },
};

/** The lead's wait for every child it spawned. */
export const WAIT: DynamicStep = (request) => ({
  toolCalls: [{
    name: "wait_agents",
    callId: "call-wait",
    arguments: { threadIds: toolOutputs(request, "spawn_agent").map((o) => o.threadId) },
  }],
});

/** Calls `onStart(n)` when the gateway's n-th stream (1-based) starts. */
export function watched(inner: Gateway, onStart: (n: number) => void): Gateway {
  let started = 0;
  return {
    info: inner.info,
    stream(
      request: ProviderRequest,
      options: { signal: AbortSignal },
    ): AsyncIterable<ProviderEvent> {
      onStart(++started);
      return inner.stream(request, options);
    },
  };
}

/** A read tool that holds its batch open until the process dies (or returns, when `release`). */
export function holdTool(onReached: () => void, release = false) {
  return defineTool({
    name: "hold",
    description: "Holds the batch open",
    input: z.object({}),
    effect: "read",
    execute: async () => {
      if (release) return "released";
      onReached();
      return await new Promise<string>(() => {});
    },
  });
}

/** The lead and its worker, over the given gateways. */
export function leadAgent(
  lead: (ScriptStep | DynamicStep)[] | Gateway,
  worker: (ScriptStep | DynamicStep)[] | Gateway,
  hold = holdTool(() => {}, true),
): Agent {
  const gatewayOf = (g: (ScriptStep | DynamicStep)[] | Gateway): Gateway =>
    Array.isArray(g) ? scriptedGateway(g) : g;
  return defineAgent({
    id: "lead",
    systemPrompt: "You lead.",
    gateway: gatewayOf(lead),
    tools: [hold],
    subagents: [
      defineAgent({ id: "worker", systemPrompt: "You dig.", gateway: gatewayOf(worker) }),
    ],
  });
}
