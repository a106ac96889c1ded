/**
 * Shared set-up for sub-agent tests: a parent agent whose script can read
 * the ids of the children it spawned from the requests it receives.
 */
import {
  type Agent,
  type AgentConfig,
  defineAgent,
  type Host,
  type KvStore,
  memoryStore,
  openHost,
  type ProviderRequest,
  type ThreadService,
} from "@floret/engine";
import { type DynamicStep, scriptedGateway, type ScriptStep } from "@floret/engine/testing";

/** The parsed JSON outputs of every tool message named `name`, oldest first. */
export function toolOutputs(request: ProviderRequest, name: string): Record<string, unknown>[] {
  const outputs: Record<string, unknown>[] = [];
  for (const message of request.messages) {
    if (message.role !== "tool" || message.name !== name) continue;
    try {
      outputs.push(JSON.parse(message.output));
    } catch {
      outputs.push({ error: message.output });
    }
  }
  return outputs;
}

/** The raw outputs of every tool message named `name`. */
export function rawOutputs(request: ProviderRequest, name: string): string[] {
  return request.messages.flatMap((m) => (m.role === "tool" && m.name === name ? [m.output] : []));
}

/** A step that waits for every child spawned so far. */
export const waitForSpawned: DynamicStep = (request) => ({
  toolCalls: [{
    name: "wait_agents",
    arguments: {
      threadIds: toolOutputs(request, "spawn_agent").map((o) => o.threadId).filter(Boolean),
    },
  }],
});

/** A child agent whose every answer is a function of its last user message. */
export function childAgent(
  id: string,
  answer: (task: string, request: ProviderRequest) => ScriptStep = (task) => ({
    text: `${id} report on: ${task}`,
  }),
  config: Partial<AgentConfig> = {},
): Agent {
  const step: DynamicStep = (request) => {
    const users = request.messages.filter((m) => m.role === "user");
    return answer(users.at(-1)?.text ?? "", request);
  };
  return defineAgent({
    id,
    systemPrompt: `You are ${id}.`,
    gateway: scriptedGateway(Array.from({ length: 50 }, () => step)),
    providerRetry: { delaysMs: [1] },
    ...config,
  });
}

/** A host with a parent agent, and one root thread. */
export interface Family {
  host: Host;
  threads: ThreadService;
  threadId: string;
  store: KvStore;
  parent: Agent;
}

/** Opens a host whose root agent plays `steps` and may start `subagents`. */
export async function family(
  steps: (ScriptStep | DynamicStep)[],
  subagents: Agent[],
  config: Partial<AgentConfig> = {},
  store: KvStore = memoryStore(),
): Promise<Family> {
  const parent = defineAgent({
    id: "lead",
    systemPrompt: "You lead.",
    gateway: scriptedGateway(steps),
    providerRetry: { delaysMs: [1] },
    subagents,
    ...config,
  });
  const host = await openHost({ store });
  const threads = host.threads({ agent: parent });
  const { threadId } = await threads.create({ requestKey: "create" });
  return { host, threads, threadId, store, parent };
}

/** Waits until the parent is idle, then until each child is too. */
export async function settleAll(f: Family, threadId = f.threadId): Promise<void> {
  await f.threads.waitForIdle(threadId, { timeoutMs: 10_000 });
  const { threads } = await f.threads.list({ parentThreadId: threadId });
  for (const child of threads) await settleAll(f, child.threadId);
}
