/**
 * Agents: a system prompt, a gateway, tools and the policies a run follows.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { agentConfigSchema } from "../validation/config_schemas.ts";
import { parseInput } from "../validation/parse_input.ts";
import type { Gateway, ReasoningEffort } from "../provider/gateway.ts";
import type { TokenCounter } from "../context/token_counter.ts";
import { implementationOf, type ToolDefinition } from "../tools/define_tool.ts";
import { askUserTool, todoWriteTool } from "../tools/builtin_tools.ts";
import { BUILTIN_TOOL_NAMES } from "../tools/builtin_names.ts";
import {
  type ProviderRetryPolicy,
  type ProviderTimeouts,
  type ResolvedRetryPolicy,
  resolveRetryPolicy,
} from "./retry_policy.ts";

/** Context window settings; unknown values come from the gateway's capabilities. */
export interface ContextSettings {
  /** The model's context window in tokens. */
  windowTokens?: number | undefined;
  /** Output budget requested per response. */
  maxOutputTokens?: number | undefined;
  /** The model's own output limit. */
  modelMaxOutputTokens?: number | undefined;
  /**
   * Sizes requests for the thresholds, compaction and `context()` figures.
   * Default: the engine's rough, tokenizer-free count. Pass
   * `await tokenCounter(model)` from `@floret/engine/tokens` for exact counts
   * on OpenAI models and conservative ones elsewhere.
   */
  tokenCounter?: TokenCounter | undefined;
}

/** What {@link defineAgent} takes. */
export interface AgentConfig {
  /** Stable id, recorded on every turn. */
  id: string;
  /** A name for people. */
  name?: string | undefined;
  /** The system prompt, first in every request. */
  systemPrompt: string;
  /** The model transport. */
  gateway: Gateway;
  /** Tools the model may call. */
  tools?: ToolDefinition[] | undefined;
  /** Context window settings. */
  context?: ContextSettings | undefined;
  /** Provider requests per turn before it fails with `max_steps`. Default 200. */
  maxSteps?: number | undefined;
  /** Provider recovery. */
  providerRetry?: ProviderRetryPolicy | undefined;
  /** Provider request timeouts. */
  timeouts?: ProviderTimeouts | undefined;
  /**
   * The built-in `ask_user` tool (default on). Its input:
   * `{ questions: { id: string; prompt: string; options?: string[]; secret?: boolean }[] }`.
   * The model calls it to ask the user; the thread waits with an "input" interaction.
   */
  askUser?: boolean | undefined;
  /** Agents this one may start as child threads (gives the model `spawn_agent` and its siblings). */
  subagents?: Agent[] | undefined;
  /** Admit child facts (completed, failed, cancelled, needs input/approval) at the next provider request. */
  parentEvents?: boolean | undefined;
  /** Bounds on child threads (defaults: depth 3, 8 live children per parent). */
  subagentLimits?: SubagentLimits | undefined;
  /** The built-in `todo_write` tool, which keeps `view.todos` (default on). */
  todos?: boolean | undefined;
  /**
   * Titles: `"host"` (default) keeps the first message's first line as a
   * fallback title; `"provider"` also asks this agent's gateway for a title in
   * the background after the first message is admitted. A host title always wins.
   */
  titles?: "host" | "provider" | undefined;
  /**
   * How hard the model thinks before answering. Each gateway maps the level
   * to its provider (Chat Completions `reasoning_effort`, Responses
   * `reasoning.effort`, Anthropic `thinking.budget_tokens`); a level the
   * gateway's `capabilities.reasoningLevels` does not list is refused here.
   */
  reasoning?: { effort: ReasoningEffort } | undefined;
  /**
   * The largest request, in bytes of its JSON, the engine sends: a request
   * over it fails the turn `request_too_large` before it is dispatched.
   */
  maxRequestBytes?: number | undefined;
  /**
   * The built-in `goal` tool and goal reflection: the model keeps one
   * objective (`view.goal`), reviews it with evidence before it stops and
   * completes it only after a review. Default off.
   */
  goals?: boolean | undefined;
}

/** Bounds on child threads; each breach is a tool error the model sees. */
export interface SubagentLimits {
  /** How deep children may nest below a root thread (a root's child is depth 1). Default 3. */
  maxDepth?: number | undefined;
  /** Children of one parent that may be running or waiting at once. Default 8. */
  maxLiveChildren?: number | undefined;
}

/** A validated agent, ready for `host.threads()`. */
export interface Agent {
  /** The agent's id. */
  readonly id: string;
  /** A name for people. */
  readonly name?: string;
  /** The system prompt. */
  readonly systemPrompt: string;
  /** The model transport. */
  readonly gateway: Gateway;
  /** Tools by name, as defined with `defineTool`. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  /** Context window settings. */
  readonly context: ContextSettings;
  /** Step limit per turn. */
  readonly maxSteps: number;
  /** Provider recovery and timeouts with every default filled in. */
  readonly retry: ResolvedRetryPolicy;
  /** Agents this one may start as child threads, by id. */
  readonly subagents: ReadonlyMap<string, Agent>;
  /** Whether child facts are admitted to this agent's threads. */
  readonly parentEvents: boolean;
  /** Bounds on child threads, defaults filled in. */
  readonly subagentLimits: Required<SubagentLimits>;
  /** How the thread's title is made. */
  readonly titles: "host" | "provider";
  /** The reasoning effort every request of this agent asks for, when set. */
  readonly reasoning?: { readonly effort: ReasoningEffort };
  /** The request size limit in bytes, when set. */
  readonly maxRequestBytes?: number;
  /** Whether the model has the `goal` tool and is asked to reflect on an unreviewed goal. */
  readonly goals?: boolean;
}

/** The built-in tools of an agent with `subagents`; its own tools may not take these names. */
export const PARENT_TOOL_NAMES: readonly string[] = Object.freeze([
  "spawn_agent",
  "wait_agents",
  "inspect_agent",
  "cancel_agent",
]);
/** The built-in tool of a child thread; a subagent's own tools may not take this name. */
export const REPORT_TOOL_NAME = "report_to_parent";

/** Default bounds on child threads. */
export const DEFAULT_SUBAGENT_LIMITS: Required<SubagentLimits> = Object.freeze({
  maxDepth: 3,
  maxLiveChildren: 8,
});

/** The default step limit per turn. */
export const DEFAULT_MAX_STEPS = 200;

/**
 * Validates an agent configuration.
 *
 * @param config the agent's prompt, gateway, tools and policies
 * @returns the agent
 * @throws {FloretError} `invalid_input` for a missing gateway, duplicate tool names or bad numbers
 * @example
 * ```ts
 * import { defineAgent } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * const agent = defineAgent({ id: "helper", systemPrompt: "Be brief.", gateway: scriptedGateway([{ text: "Hi" }]) });
 * ```
 */
export function defineAgent(config: AgentConfig): Agent {
  parseInput(agentConfigSchema, config, "agent configuration");
  const titles = config.titles ?? "host";
  const maxSteps = config.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new FloretError(
      "invalid_input",
      `Agent maxSteps must be a positive integer: ${maxSteps}`,
    );
  }
  const tools = new Map<string, ToolDefinition>();
  for (const definition of config.tools ?? []) {
    // Refuses objects that defineTool did not make, before any run needs them.
    const { name } = implementationOf(definition);
    if (tools.has(name)) throw new FloretError("invalid_input", `Duplicate tool name: ${name}`);
    const builtinOn = name === "ask_user" ? config.askUser !== false : config.todos !== false;
    if (BUILTIN_TOOL_NAMES.has(name) && builtinOn) {
      throw new FloretError("invalid_input", `Tool name is reserved for a built-in tool: ${name}`);
    }
    tools.set(name, definition);
  }
  const subagents = new Map<string, Agent>();
  for (const child of config.subagents ?? []) {
    if (!isAgent(child)) {
      throw new FloretError("invalid_input", "Agent subagents must be agents made by defineAgent");
    }
    if (subagents.has(child.id)) {
      throw new FloretError("invalid_input", `Duplicate subagent id: ${child.id}`);
    }
    if (child.tools.has(REPORT_TOOL_NAME)) {
      throw new FloretError(
        "invalid_input",
        `Subagent ${child.id} has a tool named ${REPORT_TOOL_NAME}, which children get built in`,
      );
    }
    subagents.set(child.id, child);
  }
  const clash = subagents.size > 0 ? PARENT_TOOL_NAMES.find((name) => tools.has(name)) : undefined;
  if (clash) {
    throw new FloretError(
      "invalid_input",
      `Tool name ${clash} is built in for agents with subagents`,
    );
  }
  // Types and ranges of subagentLimits and parentEvents were checked by the schema.
  // Field by field: an explicit `undefined` keeps the default.
  const subagentLimits = {
    maxDepth: config.subagentLimits?.maxDepth ?? DEFAULT_SUBAGENT_LIMITS.maxDepth,
    maxLiveChildren: config.subagentLimits?.maxLiveChildren ??
      DEFAULT_SUBAGENT_LIMITS.maxLiveChildren,
  };
  checkReasoningLevel(config);
  if (config.askUser !== false) tools.set(askUserTool().name, askUserTool());
  if (config.todos !== false) tools.set(todoWriteTool().name, todoWriteTool());
  const agent: Agent = {
    id: config.id,
    name: config.name,
    systemPrompt: config.systemPrompt,
    gateway: config.gateway,
    tools,
    context: { ...config.context },
    maxSteps,
    retry: resolveRetryPolicy(config.providerRetry, config.timeouts),
    subagents,
    parentEvents: config.parentEvents ?? false,
    subagentLimits,
    titles,
  };
  if (config.reasoning) {
    (agent as { reasoning?: Agent["reasoning"] }).reasoning = Object.freeze({
      effort: config.reasoning.effort,
    });
  }
  if (config.maxRequestBytes !== undefined) {
    (agent as { maxRequestBytes?: number }).maxRequestBytes = config.maxRequestBytes;
  }
  if (config.goals === true) {
    if (tools.has("goal")) {
      throw new FloretError("invalid_input", "Tool name goal is built in for agents with goals");
    }
    Object.assign(agent, { goals: true });
  }
  made.add(agent);
  return agent;
}

const made = new WeakSet<object>();

/**
 * Refuses a reasoning level the gateway says it cannot send. A gateway that
 * lists no levels (a hand-written one, an unknown model) passes any level on.
 */
function checkReasoningLevel(config: AgentConfig): void {
  const effort = config.reasoning?.effort;
  if (effort === undefined) return;
  const levels = config.gateway.info?.capabilities?.reasoningLevels;
  if (!Array.isArray(levels) || levels.includes(effort)) return;
  const { provider, model } = config.gateway.info;
  throw new FloretError(
    "invalid_input",
    `Reasoning effort "${effort}" is not supported by ${provider}/${model}; it supports: ${
      levels.length > 0 ? levels.join(", ") : "none"
    }`,
  );
}

/**
 * Whether a value is an agent returned by {@link defineAgent}.
 *
 * @param value anything
 * @returns true for agents made by `defineAgent`
 */
export function isAgent(value: unknown): value is Agent {
  return typeof value === "object" && value !== null && made.has(value);
}
