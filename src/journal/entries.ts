/**
 * Canonical journal entries: the only durable truth about a thread. Entries
 * are immutable once committed and carry their sequence number on the thread's
 * path (a fork continues its source's numbering).
 *
 * @module
 */
import type { StructuredNote } from "./structured_codec.ts";
import type { TurnFailureCode } from "../errors.ts";
import type {
  CitedSource,
  FinishReason,
  HostedToolCall,
  ImageAttachment,
  Usage,
} from "../provider/gateway.ts";
import type { ToolActivity } from "../tools/tool_activity.ts";
import type { ProviderFailureEvidence } from "../provider/provider_error.ts";
import type { InputContextItem, InputReference } from "../validation/turn_input_schemas.ts";

export type { InputContextItem, InputReference };

/** A user's input as admitted. */
export interface AdmittedInput {
  text: string;
  attachments?: ImageAttachment[];
  /** Threads (and items) the message refers to; rendered as notes into every later request. */
  references?: InputReference[];
  /** Labelled context that stays with the message; rendered after its text. */
  context?: InputContextItem[];
}

/** Extra context for one turn's requests only; never stored, never part of a fingerprint. */
export interface SupplementalContext {
  title: string;
  text: string;
}

/** A tool call as the model produced it, with the engine's verdict. */
export interface CallRecord {
  callId: string;
  name: string;
  /** The raw argument text the model sent. */
  arguments: string;
  /** Why the call was rejected before running (bad JSON, schema, unknown tool); no tool item. */
  invalid?: string;
  /** Permission decision for valid calls; `ask` waits for the approval `interactionId`. */
  decision?: "allow" | "ask" | "deny";
  /** Written by earlier releases, which refused calls that needed approval. */
  needsApproval?: boolean;
  /** The interaction this call waits for: an approval (`decision: "ask"`) or an `ask_user` question. */
  interactionId?: string;
  /** Blocked by the repetition guard; the model gets feedback instead. */
  repeated?: boolean;
}

/** Final status of a tool call. */
export type ToolOutcomeStatus =
  | "completed"
  | "error"
  | "denied"
  | "cancelled"
  | "unknown"
  /** The tool said its effect may or may not have happened (`effectOutcome: "uncertain"`); the turn goes on. */
  | "uncertain";

/** A settled tool call, as the model will see it. */
export interface ToolOutcome {
  callId: string;
  name: string;
  status: ToolOutcomeStatus;
  /** What the model sees (bounded; see `artifactId` for the full text). */
  output: string;
  /** The full output, when it was too long for the model. */
  artifactId?: string;
  /** The handler's structured data: the JSON part of its stored form (structured_codec.ts). */
  structured?: unknown;
  /** The type notes that restore `structured` (absent for plain JSON). */
  structuredTypes?: StructuredNote[];
  /** Display facts the tool returned, validated and bounded. */
  activity?: ToolActivity;
}

/** How a turn ended. */
export type TurnOutcome = "completed" | "failed" | "cancelled" | "interrupted";

/** A turn failure as recorded. */
export interface TurnFailure {
  code: TurnFailureCode;
  message: string;
  /** Provider details for `provider_error` (status, kind, provider code, request id). */
  provider?: {
    status?: number;
    kind?: string;
    providerCode?: string;
    requestId?: string;
    /** Body (≤ 4 KiB, redacted), causes and timeout stage (engine/attempt/failure_evidence.ts). */
    evidence?: ProviderFailureEvidence;
  };
}

/** Fields every entry has. */
interface EntryBase {
  /** Position on the thread's path, starting at 1. */
  seq: number;
  /** ISO timestamp of the commit. */
  at: string;
  turnId: string;
}

/** A turn was admitted: from `send`, a promoted queue item, or `retry`. */
export interface TurnStartedEntry extends EntryBase {
  kind: "turn_started";
  runId: string;
  agentId: string;
  requestKey: string;
  /** Absent on retries: they reuse their source's user input and add no user item. */
  input?: AdmittedInput;
  /** A compaction-only turn (manual `compact`): no input, no model request, never retried. */
  compaction?: boolean;
  retryOf?: { turnId: string; mode: "resume" | "regenerate" };
  /** The fingerprint of the turn's recorded surface (absent in older journals). */
  surface?: string;
  /**
   * The run labels of `send({ labels })` (a retry copies its source's): they
   * reach tools, permission checks, provider requests and observations,
   * never the model. Absent when none were given.
   */
  labels?: Record<string, string>;
  /**
   * The ordinal of the turn's first item: how many items the path shows
   * before this turn. It lets a history page be read from its own turns,
   * the way `seq` lets an entry be found without reading the ones before.
   * Absent in journals of earlier releases (their pages read the whole path).
   */
  ordinal?: number;
}

/** One provider response: assistant output and tool calls, with the dispatch markers of effectful calls. */
export interface StepEntry extends EntryBase {
  kind: "step";
  runId: string;
  step: number;
  text: string;
  reasoning?: string;
  calls: CallRecord[];
  finish: FinishReason;
  /** Text cut off by a cancel: shown, never sent to the model. */
  partial?: boolean;
  usage?: Usage;
  /**
   * The usage measured a request with supplemental context, which is not
   * stored: it is accounted for, never taken as the history's confirmed size.
   */
  unconfirmed?: true;
  /** Opaque provider state, replayed only to a gateway with the same `stateKey`. */
  state?: unknown;
  stateKey: string;
  /** Calls whose side effect may start once this entry is committed. */
  dispatched?: string[];
  /** Calls the provider ran itself (hosted search): shown as tool items, never dispatched. */
  hosted?: HostedToolCall[];
  /** Sources the step's text cites (ranges are UTF-16 offsets into `text`). */
  sources?: CitedSource[];
}

/** A question put to the user, as stored (secret answers are never stored). */
export interface StoredQuestion {
  id: string;
  prompt: string;
  /** Values, or values with a description (see tools/question_shape.ts). */
  options?: (string | { value: string; description?: string })[];
  secret?: boolean;
  header?: string;
  placeholder?: string;
  reason?: string;
  /** Only listed options are accepted (default true when options are given). */
  exhaustive?: boolean;
}

/** A durable approval or question, opened in the same commit as the step or result that needs it. */
export interface InteractionOpenedEntry extends EntryBase {
  kind: "interaction_opened";
  runId: string;
  interactionId: string;
  interaction: "approval" | "input";
  /** The call it belongs to (approvals, `ask_user`, a result that asked for input). */
  callId?: string;
  toolName?: string;
  questions?: StoredQuestion[];
  /** Set when a secret question is asked again after its answer was lost with its run. */
  reaskOf?: string;
}

/** How an interaction was resolved. Secret answers appear only as ids in `redacted`. */
export type InteractionResolution =
  | { type: "decision"; decision: "approve" | "deny" }
  | { type: "answers"; answers: { questionId: string; value: string }[]; redacted: string[] }
  | { type: "cancelled" };

/** An interaction was resolved by `respond`, or cancelled with its turn. */
export interface InteractionResolvedEntry extends EntryBase {
  kind: "interaction_resolved";
  interactionId: string;
  resolution: InteractionResolution;
  /** The run that carries on with the answer (secret answers live only in its memory). */
  runId?: string;
}

/** A durable instruction from the user that joins the running turn's next request. */
export interface SteerEntry extends EntryBase {
  kind: "steer";
  steerId: string;
  text: string;
}

/** Side-effecting calls that are about to run (when not already marked in their step). */
export interface ToolDispatchedEntry extends EntryBase {
  kind: "tool_dispatched";
  runId: string;
  callIds: string[];
  /** Approved `none`/`read` calls that started: shown as running, safe to run again. */
  safe?: string[];
}

/** Results of one batch, in call order. */
export interface ToolResultsEntry extends EntryBase {
  kind: "tool_results";
  runId: string;
  results: ToolOutcome[];
  /**
   * The turn whose step made these calls, when it is not this entry's turn: a
   * resumed retry ran calls that a crash had cut off again, and their results
   * replace the interrupted ones. `runId` is then the run that made the step.
   */
  ofTurnId?: string;
}

/** The turn's terminal. */
export interface TurnEndedEntry extends EntryBase {
  kind: "turn_ended";
  runId?: string;
  outcome: TurnOutcome;
  failure?: TurnFailure;
}

/** What started a compaction operation. */
export type CompactionTrigger = "threshold" | "overflow" | "manual";

/**
 * One compaction operation and its final status. A `compacted` entry installs
 * a checkpoint: later requests send `summary` in place of every message
 * before `cutSeq` (the current user input stays verbatim).
 */
export interface CompactionEntry extends EntryBase {
  kind: "compaction";
  runId?: string;
  operationId: string;
  trigger: CompactionTrigger;
  status: "compacted" | "failed" | "noop";
  /** Estimated tokens of the request before the operation. */
  tokensBefore: number;
  /** Estimated tokens of the rebuilt request (`compacted` only). */
  tokensAfter?: number;
  /** The summary text (`compacted` only). */
  summary?: string;
  /** Messages from this entry seq on are kept verbatim (`compacted` only). */
  cutSeq?: number;
  /** Earlier user inputs from the summarised part, kept verbatim with the summary. */
  keptInputs?: string[];
  /** Usage of the summary requests. */
  usage?: Usage;
  /** Why a `failed` or `noop` operation installed nothing (numbers, never prompt text). */
  reason?: string;
  /**
   * A `failed` record written for an operation that was stopped before it
   * finished (a cancel, a crash, a restore, a fork cut inside its turn), not
   * by the operation itself. Its summary never failed, so the circuit
   * breaker does not count it.
   */
  interrupted?: boolean;
}

/**
 * A compaction operation has begun: committed before its first summary
 * request (a manual one, with its compaction turn's admission), so that an
 * operation stopped before its record (a cancel, a crash) still leaves one:
 * whoever settles the turn writes the `failed` record of each operation that
 * was started and never finished.
 */
export interface CompactionStartedEntry extends EntryBase {
  kind: "compaction_started";
  runId?: string;
  operationId: string;
  trigger: CompactionTrigger;
  /** Estimated tokens of the request before the operation. */
  tokensBefore: number;
}

/** A fact about a child thread, as admitted to its parent (`parentEvents`). */
export interface ChildEvent {
  /** Identifies the fact, so it is admitted once: child, turn or interaction, and kind. */
  key: string;
  childThreadId: string;
  fact: "completed" | "failed" | "cancelled" | "needs_input" | "needs_approval";
  /** The user-role message the parent's model reads. */
  text: string;
}

/** Child facts admitted to a parent at a provider boundary of its running turn. */
export interface ChildEventsEntry extends EntryBase {
  kind: "child_events";
  runId: string;
  events: ChildEvent[];
}

/**
 * A runtime note the engine adds to the running turn's context (goal
 * reflection): a user-role message for the model, never a view item.
 */
export interface NoteEntry extends EntryBase {
  kind: "note";
  runId: string;
  text: string;
}

/** Every journal entry. */
export type Entry =
  | TurnStartedEntry
  | StepEntry
  | ToolDispatchedEntry
  | ToolResultsEntry
  | TurnEndedEntry
  | CompactionEntry
  | CompactionStartedEntry
  | ChildEventsEntry
  | InteractionOpenedEntry
  | InteractionResolvedEntry
  | SteerEntry
  | NoteEntry;

/** An entry before the journal assigns `seq` and `at`. */
export type NewEntry = Entry extends infer E ? E extends Entry ? Omit<E, "seq" | "at"> : never
  : never;

/** The entry kinds this version of the engine writes and reads. */
export const ENTRY_KINDS: ReadonlySet<string> = new Set([
  "turn_started",
  "step",
  "tool_dispatched",
  "tool_results",
  "turn_ended",
  "compaction",
  "compaction_started",
  "child_events",
  "interaction_opened",
  "interaction_resolved",
  "steer",
  "note",
]);
