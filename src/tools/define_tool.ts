/**
 * Tools the model can call: a zod input schema, an effect class that decides
 * how a crash is settled, a permission, and a handler.
 *
 * @module
 */
import type { Question } from "./question_shape.ts";
import { z } from "zod";
import { FloretError } from "../errors.ts";
import { toolSpecSchema } from "../validation/config_schemas.ts";
import { parseInput } from "../validation/parse_input.ts";
import type { ToolActivity } from "./tool_activity.ts";

/** What a tool may change; `write`, `network` and `shell` calls get a durable dispatch marker. */
export type ToolEffect = "none" | "read" | "write" | "network" | "shell";

/** Whether a call runs, waits for approval, or is refused. */
export type PermissionDecision = "allow" | "ask" | "deny";

/** What a tool handler knows about its call. */
export interface ToolContext {
  /** The thread. */
  threadId: string;
  /** The turn. */
  turnId: string;
  /** The run (one execution attempt of the turn). */
  runId: string;
  /** The provider's call id. */
  callId: string;
  /** Aborted when the turn is cancelled or the host shuts down. */
  signal: AbortSignal;
  /**
   * The turn's run labels (`send({ labels })`), `{}` when it has none;
   * read-only (frozen). The model never sees them.
   */
  labels: Readonly<Record<string, string>>;
}

/**
 * What a permission function learns besides the call's input: where the
 * call happens and the turn's run labels.
 */
export interface PermissionContext {
  /** The thread. */
  threadId: string;
  /** The turn. */
  turnId: string;
  /** The run. */
  runId: string;
  /** The provider's call id. */
  callId: string;
  /** The turn's run labels, `{}` when it has none (frozen). */
  labels: Readonly<Record<string, string>>;
}

/** A handler's result when a plain string is not enough. */
export interface ToolResult {
  /** What the model sees. */
  output: string;
  /** The call failed; the model sees the output as an error. */
  isError?: boolean;
  /** Structured data for the host; the model does not see it. */
  structured?: unknown;
  /**
   * `uncertain` (with `isError`): the side effect may or may not have happened
   * (a payment that timed out). The result is committed with tool status
   * `uncertain`, the model reads it as an error and the turn goes on, so the
   * model can check before acting again. Retry and replay keep the result.
   */
  effectOutcome?: "confirmed" | "uncertain";
  /**
   * Ask the user: the thread waits with an "input" interaction, and the
   * answers reach the model as one user message after this result.
   */
  inputRequired?: {
    questions: Question[];
  };
  /**
   * Display facts for the tool item (a label and rows of text, Markdown or
   * code), sanitised by the host; kept with the result, never shown to the
   * model. Bounded by `ACTIVITY_LIMITS`; a wrong shape drops it (observed as
   * `tool.activity_rejected`).
   */
  activity?: ToolActivity;
}

/**
 * A tool, as hosts hold it. Build one with {@link defineTool}; the engine
 * keeps the schema and handler behind it, so only tools made by
 * `defineTool` can be given to an agent.
 */
export interface ToolDefinition<I = unknown> {
  /** The name the model calls. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** What the tool may change. */
  readonly effect: ToolEffect;
  /** Marks the input type; never set at run time. */
  readonly __input?: I;
}

/** What the engine runs for a tool (internal; looked up with {@link implementationOf}). */
export interface ToolImplementation {
  readonly name: string;
  readonly description: string;
  readonly effect: ToolEffect;
  /** The zod schema of the input. */
  readonly input: z.ZodType;
  /** JSON Schema of the input, derived from the zod schema. */
  readonly inputJsonSchema: Record<string, unknown>;
  /** Decides whether a validated call runs. */
  permissionFor(input: unknown, context: PermissionContext): PermissionDecision;
  /** Runs the call. */
  execute(input: unknown, context: ToolContext): Promise<unknown> | unknown;
}

const implementations = new WeakMap<ToolDefinition, ToolImplementation>();

/**
 * The implementation behind a tool made by {@link defineTool}.
 *
 * @throws {FloretError} `invalid_input` for any other object
 */
export function implementationOf(tool: ToolDefinition): ToolImplementation {
  const implementation = typeof tool === "object" && tool !== null
    ? implementations.get(tool)
    : undefined;
  if (!implementation) {
    throw new FloretError("invalid_input", `Tool ${String(tool?.name)} was not made by defineTool`);
  }
  return implementation;
}

/**
 * A zod 4 schema, as {@link defineTool} takes it (`z.object({ ... })`). An
 * alias of our own so the docs of this package stay complete without zod's.
 */
export type ToolInputSchema = z.ZodType;

/**
 * The input a handler receives for schema `S`: zod's `z.infer<S>`, its parsed
 * output. Written the way zod writes `output<T>`, so the two are the same type
 * to the compiler.
 */
export type ToolInput<S extends ToolInputSchema> = S extends {
  // deno-lint-ignore no-explicit-any
  _zod: { output: any };
} ? S["_zod"]["output"]
  : unknown;

/** The specification {@link defineTool} takes. */
export interface ToolSpec<S extends ToolInputSchema> {
  /** The name the model calls: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The zod schema of the input object. */
  input: S;
  /** Default `none`. */
  effect?: ToolEffect | undefined;
  /** Default `allow`. */
  permission?:
    | PermissionDecision
    | ((input: ToolInput<S>, context: PermissionContext) => PermissionDecision)
    | undefined;
  /** The handler; a thrown error becomes an `error` result the model sees. */
  execute(
    input: ToolInput<S>,
    context: ToolContext,
  ): Promise<string | ToolResult> | string | ToolResult;
}

/**
 * Defines a tool. The JSON Schema the model sees is generated from the zod schema.
 *
 * @param spec name, description, zod input schema, effect, permission and handler
 * @returns the tool definition
 * @throws {FloretError} `invalid_input` for anything but a valid specification (bad name, effect, schema, handler)
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineTool } from "@floret/engine";
 * const add = defineTool({
 *   name: "add",
 *   description: "Add two numbers",
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 * ```
 */
export function defineTool<S extends ToolInputSchema>(
  spec: ToolSpec<S>,
): ToolDefinition<ToolInput<S>> {
  parseInput(toolSpecSchema, spec, "tool specification");
  const effect = spec.effect ?? "none";
  let inputJsonSchema: Record<string, unknown>;
  try {
    inputJsonSchema = z.toJSONSchema(spec.input, { io: "input" }) as Record<string, unknown>;
  } catch (cause) {
    throw new FloretError(
      "invalid_input",
      `Tool ${spec.name} input schema has no JSON Schema form`,
      { cause },
    );
  }
  delete inputJsonSchema.$schema;
  // Providers take an object of arguments: a tool's input is an object schema.
  if (inputJsonSchema.type !== "object") {
    throw new FloretError(
      "invalid_input",
      `Tool ${spec.name} input must be an object schema (z.object({ ... })), not ${
        String(inputJsonSchema.type ?? "a union or other non-object schema")
      }`,
    );
  }
  const permission = spec.permission ?? "allow";
  const definition: ToolDefinition<ToolInput<S>> = Object.freeze({
    name: spec.name,
    description: spec.description,
    effect,
  });
  implementations.set(definition, {
    name: spec.name,
    description: spec.description,
    effect,
    input: spec.input,
    inputJsonSchema,
    permissionFor: typeof permission === "function"
      ? (input, context) => permission(input as ToolInput<S>, context)
      : () => permission,
    execute: (input, context) => spec.execute(input as ToolInput<S>, context),
  });
  return definition;
}

/** Whether calls to a tool of this effect need a dispatch marker before they run. */
export function needsDispatchMarker(effect: ToolEffect): boolean {
  return effect === "write" || effect === "network" || effect === "shell";
}
