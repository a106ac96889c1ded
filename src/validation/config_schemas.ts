/**
 * Schemas of the configuration objects hosts pass: `defineTool`,
 * `defineAgent` and `openHost` options. They check types and ranges only;
 * the functions that take them add what a schema cannot say (a tool made by
 * `defineTool`, duplicate tool names).
 *
 * @module
 */
import { z } from "zod";

/** The longest delay a timer can take (setTimeout's signed 32-bit limit). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration option: an integer number of ms from 1 to 2^31−1. `0` would
 * fail every turn at once, and past the limit setTimeout fires at once
 * (and re-arms forever), so both are `invalid_input`.
 */
export const durationMs: z.ZodType<number> = z.number().int().min(1).max(MAX_TIMER_MS);
const positiveInt = z.number().int().min(1);
const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", {
    message: `${what} must be a function`,
  });

/**
 * A zod schema from any copy of zod 4 (duck-typed by its `_zod` internals, not
 * `instanceof`: the host may have its own copy of zod 4). A zod 3 schema has
 * `_def` and no `_zod`; it is named in the message.
 */
const zodSchema = z.custom<z.ZodType>(
  (value) =>
    typeof value === "object" && value !== null &&
    typeof (value as { safeParse?: unknown }).safeParse === "function" &&
    "_zod" in value,
  {
    error: (issue) => {
      const value = issue.input as { _def?: unknown; safeParse?: unknown } | null | undefined;
      const zod3 = typeof value === "object" && value !== null && "_def" in value &&
        typeof value.safeParse === "function";
      return zod3
        ? 'input is a zod 3 schema: tools take a zod 4 schema (zod ^4, e.g. import { z } from "zod")'
        : "input must be a zod 4 schema (an object schema, e.g. z.object({ ... }) from zod ^4)";
    },
  },
);

/** What `defineTool` checks in its specification (the handler's types come from the tool). */
export interface ToolSpecShape {
  name: string;
  description: string;
  input: z.ZodType;
  effect?: "none" | "read" | "write" | "network" | "shell";
  permission?: "allow" | "ask" | "deny" | ((...args: never[]) => unknown);
  execute: (...args: never[]) => unknown;
}

/** The shape of a tool specification. */
export const toolSpecSchema: z.ZodType<ToolSpecShape> = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "name: letters, digits, _ and -, at most 64"),
  description: z.string().max(10_000),
  input: zodSchema,
  effect: z.enum(["none", "read", "write", "network", "shell"]).optional(),
  permission: z.union([z.enum(["allow", "ask", "deny"]), fn("permission")]).optional(),
  execute: fn("execute"),
});

/** What `defineAgent` checks in its configuration. */
export interface AgentConfigShape {
  id: string;
  name?: string;
  systemPrompt: string;
  gateway: { info: object; stream: (...args: never[]) => unknown };
  tools?: unknown[];
  context?: {
    windowTokens?: number;
    maxOutputTokens?: number;
    modelMaxOutputTokens?: number;
    tokenCounter?: object;
  };
  maxSteps?: number;
  providerRetry?: {
    disabled?: boolean;
    delaysMs?: number[];
    maxTimeoutRetries?: number;
    windowMs?: number;
  };
  timeouts?: { firstOutputMs?: number; betweenOutputsMs?: number; attemptMs?: number };
  askUser?: boolean;
  subagents?: unknown[];
  parentEvents?: boolean;
  subagentLimits?: { maxDepth?: number; maxLiveChildren?: number };
  todos?: boolean;
  titles?: "host" | "provider";
  reasoning?: { effort: "minimal" | "low" | "medium" | "high" | "max" };
  maxRequestBytes?: number;
  goals?: boolean;
}

const gatewaySchema = z.custom<AgentConfigShape["gateway"]>(
  (value) =>
    typeof value === "object" && value !== null &&
    typeof (value as { stream?: unknown }).stream === "function" &&
    typeof (value as { info?: unknown }).info === "object" &&
    (value as { info?: unknown }).info !== null,
  { message: "gateway must implement the Gateway contract (info and stream)" },
);

// A counter is host code the engine calls on every step: refuse a wrong shape up front.
const tokenCounterSchema = z.custom<object>(
  (value) => {
    if (typeof value !== "object" || value === null) return false;
    const counter = value as Record<string, unknown>;
    return typeof counter.name === "string" && typeof counter.text === "function" &&
      typeof counter.message === "function" && typeof counter.tools === "function" &&
      typeof counter.requestOverhead === "number" && Number.isFinite(counter.requestOverhead) &&
      counter.requestOverhead >= 0;
  },
  { message: "tokenCounter must implement the TokenCounter contract (name, text, message, tools)" },
);

/** The shape of an agent configuration. */
export const agentConfigSchema: z.ZodType<AgentConfigShape> = z.object({
  id: z.string().max(256).refine((id) => id.trim() !== "", "Agent id is empty"),
  name: z.string().max(256).optional(),
  systemPrompt: z.string(),
  gateway: gatewaySchema,
  tools: z.array(z.unknown()).optional(),
  context: z.object({
    windowTokens: positiveInt.optional(),
    maxOutputTokens: positiveInt.optional(),
    modelMaxOutputTokens: positiveInt.optional(),
    tokenCounter: tokenCounterSchema.optional(),
  }).optional(),
  maxSteps: positiveInt.optional(),
  providerRetry: z.object({
    disabled: z.boolean().optional(),
    delaysMs: z.array(durationMs).max(100).optional(),
    maxTimeoutRetries: z.number().int().min(0).optional(),
    windowMs: durationMs.optional(),
  }).optional(),
  timeouts: z.object({
    firstOutputMs: durationMs.optional(),
    betweenOutputsMs: durationMs.optional(),
    attemptMs: durationMs.optional(),
  }).optional(),
  askUser: z.boolean().optional(),
  // Each entry must be an agent from defineAgent: defineAgent checks that.
  subagents: z.array(z.unknown()).max(256).optional(),
  parentEvents: z.boolean().optional(),
  subagentLimits: z.object({
    maxDepth: positiveInt.optional(),
    maxLiveChildren: positiveInt.optional(),
  }).optional(),
  todos: z.boolean().optional(),
  titles: z.enum(["host", "provider"]).optional(),
  reasoning: z.object({
    effort: z.enum(["minimal", "low", "medium", "high", "max"]),
  }).optional(),
  maxRequestBytes: positiveInt.optional(),
  goals: z.boolean().optional(),
});

/** What `openHost` checks in its options. */
export interface HostOptionsShape {
  store: object;
  onEvent?: (...args: never[]) => unknown;
  hostId?: string;
  leaseTtlMs?: number;
  deferExecution?: boolean;
  onStartup?: (...args: never[]) => unknown;
  ids?: (...args: never[]) => unknown;
  clock?: object;
  storeTimeoutMs?: number;
}

const storeSchema = z.custom<object>(
  (value) =>
    typeof value === "object" && value !== null &&
    ["getMany", "list", "commit", "close"].every((method) =>
      typeof (value as Record<string, unknown>)[method] === "function"
    ),
  { message: "store must be a KvStore (getMany, list, commit, close)" },
);

/** The shape of `openHost` options. */
export const hostOptionsSchema: z.ZodType<HostOptionsShape> = z.object({
  store: storeSchema,
  onEvent: fn("onEvent").optional(),
  hostId: z.string().max(256).refine((id) => id.trim() !== "", "hostId is empty").optional(),
  leaseTtlMs: z.number().int().min(30).max(MAX_TIMER_MS).optional(),
  deferExecution: z.boolean().optional(),
  onStartup: fn("onStartup").optional(),
  ids: fn("ids").optional(),
  clock: z.custom<object>(
    (value) =>
      typeof value === "object" && value !== null &&
      typeof (value as { now?: unknown }).now === "function",
    { message: "clock must have a now() function" },
  ).optional(),
  storeTimeoutMs: durationMs.optional(),
});
