/**
 * The host-facing shapes of a thread: its view, items, turns and updates.
 *
 * @module
 */
import type { TurnFailureCode } from "../errors.ts";
import type { Usage } from "../provider/gateway.ts";
import type { ToolActivity } from "../tools/tool_activity.ts";
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
  | "unknown";

/** A pending or resolved approval or question. */
export interface Interaction {
  id: string;
  kind: "approval" | "input";
  status: "pending" | "resolved";
  turnId: string;
  callId?: string;
  toolName?: string;
  questions?: { id: string; prompt: string; secret?: boolean; options?: string[] }[];
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

export type { Todo } from "../tools/builtin_names.ts";
import type { Todo } from "../tools/builtin_names.ts";

/** One entry of the conversation as a person sees it. Ids and ordinals are stable. */
export interface ThreadItem {
  id: string;
  ordinal: number;
  kind: ItemKind;
  turnId: string;
  runId?: string;
  createdAt: string;
  text?: string;
  /** The text may still grow (streaming). */
  live?: boolean;
  tool?: {
    callId: string;
    name: string;
    arguments: string;
    status: ToolItemStatus;
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
  };
  interaction?: Interaction;
}

/** One turn and how it ended. */
export interface TurnSummary {
  turnId: string;
  outcome?: "completed" | "failed" | "cancelled" | "interrupted";
  failure?: { code: TurnFailureCode; message: string; provider?: Record<string, unknown> };
  startedAt: string;
  endedAt?: string;
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
  id: string;
  requestKey: string;
  text: string;
}

/** Memory-only progress of the running turn. */
export interface RunProgress {
  turnId: string;
  runId: string;
  step: number;
  phase: "model" | "tools" | "retry_wait";
  attempt?: number;
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
  threadId: string;
  parentThreadId?: string;
  /** The tenant the thread belongs to (`create({ tenant })`, or `threadApi`'s `authorize`). */
  tenant?: string;
  forkedFrom?: { threadId: string; itemId?: string };
  title?: string;
  /** Where the title stands (see `TitleStatus`). */
  titleStatus: TitleStatus;
  /** Grows with every host title and every generation claim. */
  titleGeneration: number;
  /** Inputs a restore took out of the queue: offer them again, under current authority. */
  restoredInputs?: QueuedInput[];
  status: ThreadStatus;
  items: ThreadItem[];
  pending: Interaction[];
  queue: QueuedInput[];
  turns: TurnSummary[];
  /** The todo list the model keeps with `todo_write`; `[]` on a new thread. */
  todos: Todo[];
  runProgress?: RunProgress;
  /** Context window figures, when the thread's agent is known to this host. */
  context?: { windowTokens: number; estimateTokens: number; confirmed?: Usage };
  /** Process-local ordering of updates; not a durable cursor. */
  viewVersion: number;
}

/** A line of `list`. */
export interface ThreadSummary {
  threadId: string;
  parentThreadId?: string;
  /** The tenant the thread belongs to. */
  tenant?: string;
  title?: string;
  /** Where the title stands. */
  titleStatus: TitleStatus;
  /** Grows with every host title and every generation claim. */
  titleGeneration: number;
  status: ThreadStatus;
  createdAt: string;
  updatedAt: string;
}

/** One change to a view. `offset` of `append-text` is a UTF-8 byte offset. */
export type ViewOp =
  | { op: "add"; item: ThreadItem }
  | { op: "replace"; item: ThreadItem }
  | { op: "append-text"; itemId: string; offset: number; text: string }
  | { op: "remove"; itemId: string }
  | {
    op: "component";
    name:
      | "status"
      | "pending"
      | "queue"
      | "turns"
      | "runProgress"
      | "title"
      | "todos"
      | "titleState"
      | "context"
      | "restoredInputs";
    value: unknown;
  };

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
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** One compaction operation as `context().compactions` lists it. */
export interface CompactionRecord {
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
  id: string;
  turnId: string;
  runId: string;
  callId: string;
  /** The complete output. */
  text: string;
}

/** What `subscribe` yields. */
export type ThreadUpdate =
  | { type: "batch"; baseVersion: number; version: number; ops: ViewOp[] }
  | { type: "resync"; reason: string };
