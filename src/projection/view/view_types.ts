/**
 * The host-facing shapes of a thread: its view, items, turns and updates.
 *
 * @module
 */
import type { Goal } from "../../tools/goal_state.ts";
import type { Question } from "../../tools/question_shape.ts";
import type { TurnFailureCode } from "../../errors.ts";
import type { Usage } from "../../provider/gateway.ts";
import type { ToolActivity } from "../../tools/tool_activity.ts";
import type { TitleStatus } from "./title_state.ts";

/** `stopping` is memory-only: a cancel is in progress. */
export type ThreadStatus = "idle" | "running" | "waiting" | "stopping";
/** What an item shows. */
export type ItemKind = "user" | "thinking" | "assistant" | "tool" | "interaction";
/** The life of a tool call. */
export type ToolItemStatus =
  | "pending"
  | "waiting_approval"
  | "running"
  | "completed"
  | "error"
  | "denied"
  | "cancelled"
  | "unknown"
  /** The tool reported that its effect may or may not have happened; the model was told. */
  | "uncertain";

/** One question of an input interaction (header, placeholder, option descriptions…). */
export type { Question };

/** What an approval or question has in common. */
export interface InteractionBase {
  /** Stable id. */
  id: string;
  /** Where it stands. */
  status: "pending" | "resolved";
  /** The turn it belongs to. */
  turnId: string;
  /** How it was resolved; secret answers appear only as question ids in `redacted`. */
  resolution?: {
    decision?: "approve" | "deny";
    answers?: { questionId: string; value: string }[];
    redacted?: string[];
    cancelled?: boolean;
  };
  /** When it was opened. */
  createdAt?: string;
  /** When it was resolved. */
  resolvedAt?: string;
}

/** A tool call waiting for a person's approval (`respond` with `decision`). */
export interface ApprovalInteraction extends InteractionBase {
  /** Discriminant. */
  kind: "approval";
  /** The call that waits. */
  callId: string;
  /** The tool it calls. */
  toolName: string;
  /** Never set on this kind. */
  questions?: never;
}

/** Questions waiting for a person's answers (`respond` with `answers`). */
export interface QuestionInteraction extends InteractionBase {
  /** Discriminant. */
  kind: "input";
  /** The call that asked (`ask_user`, or a tool result that needed input). */
  callId?: string;
  /** The tool called. */
  toolName?: string;
  /** The questions to answer. */
  questions: Question[];
}

/**
 * A pending or resolved approval or question, discriminated by `kind`:
 * after `interaction.kind === "input"`, `questions` is set.
 */
export type Interaction = ApprovalInteraction | QuestionInteraction;

export type { Todo } from "../../tools/builtin_names.ts";
import type { Todo } from "../../tools/builtin_names.ts";

/** The tool call an item of kind `tool` shows. */
export interface ToolCallView {
  /** The tool call's id. */
  callId: string;
  /** The tool's name. */
  name: string;
  /** The argument text the model sent. */
  arguments: string;
  /** Where it stands. */
  status: ToolItemStatus;
  /** What the model saw of the result. */
  output?: string;
  /** The full output is kept as this artifact (the model saw a bounded head and tail). */
  artifactId?: string;
  /** The handler's `structured` value, decoded: Date, Map, Set, BigInt, undefined read back as returned. */
  structured?: unknown;
  /** Display facts the tool returned (`ToolResult.activity`), validated and bounded. */
  activity?: ToolActivity;
  /** When the call was dispatched (its recorded start); absent for calls that never ran. */
  startedAt?: string;
  /** When its result was recorded. */
  endedAt?: string;
  /** The provider ran this call itself (a hosted search); the engine never dispatched it. */
  hosted?: boolean;
}

/** What every item has. */
export interface ItemBase {
  /** Stable id. */
  id: string;
  /** Its place in `items` (0-based). */
  ordinal: number;
  /** The turn it belongs to. */
  turnId: string;
  /** The run that made it. */
  runId?: string;
  /** ISO time it was made. */
  createdAt: string;
  /** The text may still grow (streaming). */
  live?: boolean;
  /**
   * Assistant items only: the sources the text cites (from the provider's
   * citations); `start`/`end` are UTF-16 offsets into `text`, end exclusive.
   */
  sources?: { url: string; title?: string; start?: number; end?: number }[];
}

/** What a person wrote (a message, or a steer of the running turn). */
export interface UserItem extends ItemBase {
  /** Discriminant. */
  kind: "user";
  /** The text. */
  text: string;
  /** The threads (and items) the message referred to, as sent. */
  references?: { kind: "thread"; threadId: string; itemId?: string }[];
  /** The labelled context items sent with the message. */
  context?: { label: string; text: string }[];
  /** Never set on this kind. */
  tool?: never;
  /** Never set on this kind. */
  interaction?: never;
}

/** The model's reasoning, when the provider shows it. */
export interface ThinkingItem extends ItemBase {
  /** Discriminant. */
  kind: "thinking";
  /** The text. */
  text: string;
  /** Never set on this kind. */
  tool?: never;
  /** Never set on this kind. */
  interaction?: never;
}

/** Text the model wrote. */
export interface AssistantItem extends ItemBase {
  /** Discriminant. */
  kind: "assistant";
  /** The text. */
  text: string;
  /** Never set on this kind. */
  tool?: never;
  /** Never set on this kind. */
  interaction?: never;
}

/** A tool call and, once it ended, its result. */
export interface ToolItem extends ItemBase {
  /** Discriminant. */
  kind: "tool";
  /** Never set on this kind. */
  text?: never;
  /** The tool call (set only on `tool` items). */
  tool: ToolCallView;
  /** The approval this call waits for or waited for, when its permission asked. */
  interaction?: ApprovalInteraction;
}

/** Questions for a person (approvals show on their tool item instead). */
export interface InteractionItem extends ItemBase {
  /** Discriminant. */
  kind: "interaction";
  /** Never set on this kind. */
  text?: never;
  /** Never set on this kind. */
  tool?: never;
  /** The interaction (set on `interaction` items, and on tool items that waited for approval). */
  interaction: Interaction;
}

/**
 * One entry of the conversation as a person sees it, discriminated by `kind`:
 * after `item.kind === "tool"`, `item.tool` is set; text kinds have `text`.
 * Ids and ordinals are stable.
 */
export type ThreadItem = UserItem | ThinkingItem | AssistantItem | ToolItem | InteractionItem;

/** One turn and how it ended. */
export interface TurnSummary {
  /** The turn it belongs to. */
  turnId: string;
  /** How it ended (absent while it runs). */
  outcome?: "completed" | "failed" | "cancelled" | "interrupted";
  /** Why it failed (`outcome: "failed"`): a stable code and a message. */
  failure?: { code: TurnFailureCode; message: string; provider?: Record<string, unknown> };
  /** ISO time it started. */
  startedAt: string;
  /** ISO time it ended. */
  endedAt?: string;
  /** Milliseconds from start to end, once it ended. */
  durationMs?: number;
  /** Set on turns made by `retry`. */
  retryOf?: { turnId: string; mode: "resume" | "regenerate" };
  /** Usage the provider reported for the turn, summed over its steps. */
  usage?: Usage;
  /** From start to end, once the turn has ended. */
  elapsedMs?: number;
  /** The part of `elapsedMs` spent waiting for approvals and answers (the union of those waits). */
  waitingMs?: number;
  /** `elapsedMs` minus `waitingMs`. */
  workMs?: number;
  /** The assistant items that make the turn's final answer, in order (empty unless it completed). */
  finalItemIds: string[];
}

/** Input waiting for the thread. */
export interface QueuedInput {
  /** Stable id. */
  id: string;
  /** The request key it was sent with. */
  requestKey: string;
  /** The text. */
  text: string;
}

/** Memory-only progress of the running turn. */
export interface RunProgress {
  /** The turn it belongs to. */
  turnId: string;
  /** The run that made it. */
  runId: string;
  /** The step of the run (0-based). */
  step: number;
  /** What the run does now. */
  phase: "model" | "tools" | "retry_wait";
  /** The attempt number. */
  attempt?: number;
  /** The provider attempt in flight (phase `model`): when it started, first and last showed output. */
  request?: { startedAt: string; firstOutputAt?: string; lastProgressAt: string };
  /**
   * The wait before the next attempt (phase `retry_wait`): which attempt comes
   * next, of how many at most, when, and why the last one failed (its kind).
   */
  retry?: { attempt: number; limit: number; nextAttemptAt: string; reason: string };
}

/**
 * A thread as the journal and the live run show it.
 *
 * Every view the engine hands out is the caller's own, as the thread was at
 * that moment: edit it, apply update batches to it in place, keep it. Long
 * `items` and `turns` lists (64 elements or more) are copied when first read,
 * so a view nobody reads costs little whatever the thread's length; until then
 * they are enumerable accessor properties, which JSON, `structuredClone`,
 * spreads and deep equality treat as plain arrays.
 */
export interface ThreadView {
  /** The thread. */
  threadId: string;
  /** The parent thread of a sub-agent's thread. */
  parentThreadId?: string;
  /** The tenant the thread belongs to (`create({ tenant })`, or `threadApi`'s `authorize`). */
  tenant?: string;
  /** The thread (and item) it was forked from. */
  forkedFrom?: { threadId: string; itemId?: string };
  /** The title, when there is one. */
  title?: string;
  /** Where the title stands (see `TitleStatus`). */
  titleStatus: TitleStatus;
  /** Grows with every host title and every generation claim. */
  titleGeneration: number;
  /** Inputs a restore took out of the queue: offer them again, under current authority. */
  restoredInputs?: QueuedInput[];
  /** Where it stands. */
  status: ThreadStatus;
  /** The conversation, oldest first. */
  items: ThreadItem[];
  /** Approvals and questions waiting for people. */
  pending: Interaction[];
  /** Input waiting for the running turn to end. */
  queue: QueuedInput[];
  /** Turns, oldest first. */
  turns: TurnSummary[];
  /** The todo list the model keeps with `todo_write`; `[]` on a new thread. */
  todos: Todo[];
  /** Progress of the running turn. */
  runProgress?: RunProgress;
  /** Context window figures, when the thread's agent is known to this host. */
  context?: { windowTokens: number; estimateTokens: number; confirmed?: Usage };
  /** The thread's goal (agents with `goals`, or set by the host). */
  goal?: Goal;
  /** A stop requested and not yet settled: the turn ends `cancelled` soon. */
  stopping?: { mode: "immediate" | "graceful"; requestedAt: string };
  /** Process-local ordering of updates; not a durable cursor. */
  viewVersion: number;
}

/** A line of `list`. */
export interface ThreadSummary {
  /** The thread. */
  threadId: string;
  /** The parent thread of a sub-agent's thread. */
  parentThreadId?: string;
  /** The tenant the thread belongs to. */
  tenant?: string;
  /** The title, when there is one. */
  title?: string;
  /** Where the title stands. */
  titleStatus: TitleStatus;
  /** Grows with every host title and every generation claim. */
  titleGeneration: number;
  /** Where it stands. */
  status: ThreadStatus;
  /** ISO time it was made. */
  createdAt: string;
  /** ISO time of the last change. */
  updatedAt: string;
}

/** The value each `component` op carries, by component name (`null`: the field is absent). */
export interface ViewComponents {
  /** Where it stands. */
  status: ThreadStatus;
  /** Approvals and questions waiting for people. */
  pending: Interaction[];
  /** Input waiting for the running turn to end. */
  queue: QueuedInput[];
  /** Turns, oldest first. */
  turns: TurnSummary[];
  /** Progress of the running turn. */
  runProgress: RunProgress | null;
  /** The title, when there is one. */
  title: string | null;
  /** The todo list. */
  todos: Todo[];
  /** The title and where it stands. */
  titleState: { title?: string; titleStatus: TitleStatus; titleGeneration: number };
  /** Context window figures. */
  context: NonNullable<ThreadView["context"]>;
  /** Inputs a restore took out of the queue. */
  restoredInputs: QueuedInput[] | null;
  /** The thread's goal. */
  goal: Goal | null;
  /** A stop requested and not yet settled. */
  stopping: NonNullable<ThreadView["stopping"]> | null;
}

/** A `component` op: one view field replaced whole, its value typed by `name`. */
export type ComponentOp = {
  [K in keyof ViewComponents]: { op: "component"; name: K; value: ViewComponents[K] };
}[keyof ViewComponents];

/** One change to a view, discriminated by `op`. `offset` of `append-text` is a UTF-8 byte offset. */
export type ViewOp =
  | { op: "add"; item: ThreadItem }
  | { op: "replace"; item: ThreadItem }
  | { op: "append-text"; itemId: string; offset: number; text: string }
  | { op: "remove"; itemId: string }
  | ComponentOp;

/** Context window figures of a thread (see `ThreadService.context`). */
export interface ContextFigures {
  /** The model's window, when known (0 otherwise). */
  windowTokens: number;
  /** The engine's estimate of the next request (system prompt, tools, messages; after any compaction). */
  estimateTokens: number;
  /** The counter behind the estimate: `rough` (the default), or the agent's `tokenCounter` name. */
  estimator: string;
  /** The latest usage the provider reported. */
  confirmed?: Usage;
  /** Usage summed over every committed step and summary request; the four counts are disjoint. */
  totals: UsageTotals;
  /** One record per compaction operation, in operation order. */
  compactions: CompactionRecord[];
}

/** Usage summed by kind; the four counts are disjoint. */
export interface UsageTotals {
  /** Uncached input tokens. */
  inputTokens: number;
  /** Output tokens. */
  outputTokens: number;
  /** Input tokens read from the provider's cache. */
  cacheReadTokens: number;
  /** Input tokens written to the provider's cache. */
  cacheWriteTokens: number;
}

/** One compaction operation as `context().compactions` lists it. */
export interface CompactionRecord {
  /** The compaction operation. */
  operationId: string;
  /** `compacted` installed a checkpoint; `failed` and `noop` changed nothing. */
  status: "compacted" | "noop" | "failed";
  /** What started it: the threshold, a provider overflow, or `compact`. */
  trigger: "threshold" | "overflow" | "manual";
  /** The request estimate before the operation. */
  tokensBefore?: number;
  /** The request estimate after it (`compacted` only). */
  tokensAfter?: number;
  /** Why a `failed` or `noop` operation installed nothing: numbers, never prompt text. */
  reason?: string;
}

/** A tool output kept whole because the model saw it shortened. */
export interface Artifact {
  /** Stable id. */
  id: string;
  /** The turn it belongs to. */
  turnId: string;
  /** The run that made it. */
  runId: string;
  /** The tool call's id. */
  callId: string;
  /** The complete output. */
  text: string;
}

/** What `subscribe` yields. */
export type ThreadUpdate =
  | { type: "batch"; baseVersion: number; version: number; ops: ViewOp[] }
  | { type: "resync"; reason: string };
