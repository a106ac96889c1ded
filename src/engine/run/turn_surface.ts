/**
 * A turn's surface: what the model of a turn is told about itself (agent id,
 * system prompt, each tool's name, description and JSON schema, the gateway's
 * provider/model/stateKey, the reasoning effort). It is recorded when the turn
 * is admitted; a wait, retry or restart of that turn renders its requests from
 * the record, whatever the host's agent factory answers by then. Tool handlers
 * still come from the live agent, by name.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import { canonicalJson } from "../../identity/canonical_json.ts";
import { sha256Hex } from "../../identity/fingerprint.ts";
import { sha256HexSync } from "../../_runtime.ts";
import type { ProviderTool, ReasoningEffort } from "../../provider/gateway.ts";
import { implementationOf, type ToolDefinition } from "../../tools/define_tool.ts";

/** The recorded surface of a turn (stored once per distinct fingerprint and thread). */
export interface TurnSurface {
  agentId: string;
  systemPrompt: string;
  /** Every tool the model was offered, built-in ones included, in request order. */
  tools: ProviderTool[];
  gateway: { provider: string; model: string; stateKey: string };
  reasoning?: { effort: ReasoningEffort };
}

/** A surface with its fingerprint: SHA-256 hex of its canonical JSON. */
export interface FingerprintedSurface {
  fingerprint: string;
  surface: TurnSurface;
}

// Agents are immutable: an agent's surface (and its hash) is taken once.
const taken = new WeakMap<Agent, FingerprintedSurface>();

/**
 * The surface of an agent as a run would use it (pass the equipped agent, so
 * built-in tools are part of it).
 *
 * @param agent the agent
 * @returns its surface and fingerprint, at once when this runtime hashes synchronously
 */
export function surfaceOf(agent: Agent): FingerprintedSurface | Promise<FingerprintedSurface> {
  const known = taken.get(agent);
  if (known) return known;
  const frozen = FROZEN in agent ? (agent as FrozenAgent)[FROZEN] : undefined;
  if (frozen) return frozen;
  const info = agent.gateway.info;
  const surface: TurnSurface = {
    agentId: agent.id,
    systemPrompt: agent.systemPrompt,
    tools: [...agent.tools.values()].map(providerTool),
    gateway: {
      provider: String(info?.provider ?? ""),
      model: String(info?.model ?? ""),
      stateKey: typeof info?.stateKey === "string" ? info.stateKey : "",
    },
  };
  if (agent.reasoning) surface.reasoning = { effort: agent.reasoning.effort };
  const json = canonicalJson(surface);
  const done = (fingerprint: string): FingerprintedSurface => {
    const made = { fingerprint, surface };
    taken.set(agent, made);
    return made;
  };
  return sha256HexSync ? done(sha256HexSync(json)) : sha256Hex(json).then(done);
}

/** A tool as the model is told of it. */
function providerTool(definition: ToolDefinition): ProviderTool {
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: implementationOf(definition).inputJsonSchema,
  };
}

/** Where an agent made by {@link frozenAgent} keeps the surface it shows. */
const FROZEN = Symbol("floret.turnSurface");

type FrozenAgent = Agent & { readonly [FROZEN]: FingerprintedSurface };

// One frozen agent per live agent and surface, so the request builder's per-agent cache holds.
const frozenCache = new WeakMap<Agent, Map<string, Agent>>();

/**
 * The agent a resumed turn runs: the live agent's handlers under the recorded
 * surface. Its system prompt, reasoning effort and the tools the model is told
 * of are the recorded ones; its tool map holds the recorded names the live
 * agent still has (a recorded tool it lost is answered "tool no longer
 * available", see {@link recordedButGone}). The live agent is returned as it
 * is when its own surface is the recorded one.
 *
 * @param live the agent the host resolves now, equipped
 * @param recorded the surface recorded at the turn's admission
 * @returns the agent to run
 */
export function frozenAgent(live: Agent, recorded: FingerprintedSurface): Agent {
  const own = taken.get(live);
  if (own?.fingerprint === recorded.fingerprint) return live;
  let byPrint = frozenCache.get(live);
  if (!byPrint) frozenCache.set(live, byPrint = new Map());
  let agent = byPrint.get(recorded.fingerprint);
  if (!agent) {
    const tools = new Map<string, ToolDefinition>();
    for (const tool of recorded.surface.tools) {
      const definition = live.tools.get(tool.name);
      if (definition) tools.set(tool.name, definition);
    }
    const made: { -readonly [K in keyof Agent]: Agent[K] } = {
      ...live,
      id: recorded.surface.agentId,
      systemPrompt: recorded.surface.systemPrompt,
      tools,
    };
    if (recorded.surface.reasoning) made.reasoning = { ...recorded.surface.reasoning };
    else delete made.reasoning;
    Object.defineProperty(made, FROZEN, { value: recorded });
    agent = made;
    byPrint.set(recorded.fingerprint, agent);
  }
  return agent;
}

/**
 * The tools the model of a frozen agent is told of (the recorded ones), or
 * `undefined` for an agent that shows its own.
 *
 * @param agent the run's agent
 */
export function recordedTools(agent: Agent): ProviderTool[] | undefined {
  return FROZEN in agent ? (agent as FrozenAgent)[FROZEN].surface.tools : undefined;
}

/**
 * Whether `name` is a tool the turn's recorded surface offered that the live
 * agent no longer has: its calls get the error result "tool no longer available".
 *
 * @param agent the run's agent
 * @param name the tool the model called
 */
export function recordedButGone(agent: Agent, name: string): boolean {
  const tools = recordedTools(agent);
  return tools !== undefined && !agent.tools.has(name) && tools.some((t) => t.name === name);
}
