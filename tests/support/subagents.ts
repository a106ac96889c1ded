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
  type ThreadView,
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

/** A spawn_agent tool call that starts `agent` on `task`. */
export const spawnCall = (agent: string, task: string) => ({
  name: "spawn_agent",
  arguments: { agent, task },
});

/**
 * An agent `level<depth>` that spawns `level<depth+1>` and stores in
 * `answers[depth]` what its spawn_agent call returned, so a test reads at
 * which depth the nesting limit refused. Levels up to `last` can nest.
 */
export function nestingAgent(
  depth: number,
  answers: string[],
  last: number,
  config: Partial<AgentConfig> = {},
): Agent {
  return defineAgent({
    id: `level${depth}`,
    systemPrompt: "Nest.",
    gateway: scriptedGateway([
      { toolCalls: [spawnCall(`level${depth + 1}`, "deeper")] },
      (request) => {
        answers[depth] = rawOutputs(request, "spawn_agent")[0];
        return { text: `level ${depth} done` };
      },
    ]),
    subagents: depth < last ? [nestingAgent(depth + 1, answers, last, config)] : [],
    ...config,
  });
}

/**
 * A family whose parent spawns `child` on one task, waits for it, and answers
 * `reply`; `seen` collects the request that follows the wait, so a test reads
 * what wait_agents (and any parent events) told the parent.
 */
export async function spawnAndWait(
  child: Agent,
  config: Partial<AgentConfig> = {},
  task = "go",
  reply = "ok",
): Promise<Family & { seen: ProviderRequest[] }> {
  const seen: ProviderRequest[] = [];
  const f = await family(
    [
      { toolCalls: [spawnCall(child.id, task)] },
      waitForSpawned,
      (request) => {
        seen.push(request);
        return { text: reply };
      },
    ],
    [child],
    config,
  );
  return { ...f, seen };
}

/** The tool parts of the view's items that called `name`, oldest first. */
export function toolItems(view: ThreadView, name: string) {
  return view.items.filter((item) => item.tool?.name === name).map((item) => item.tool!);
}
