/**
 * One turn as the AI SDK's UI message stream (protocol v1): the turn's items
 * become `text-*`, `reasoning-*` and `tool-*` chunks, read first from a view
 * (which makes a replay the committed turn) and then from live batches, until
 * the turn has an outcome or waits for the user; then `finish` and `[DONE]`.
 * A wait ends the stream the way the AI SDK expects: `tool-approval-request`
 * for each approval (so `useChat` shows the call as approval-requested) and an
 * `ask_user` tool call, its input the questions, for each question set (so
 * `addToolOutput` answers it; the route turns that output into `respond`).
 *
 * @module
 */
import type {
  Interaction,
  ThreadItem,
  ThreadStatus,
  ThreadUpdate,
  ThreadView,
  TurnSummary,
  ViewOp,
} from "@floret/engine";
import { ASK_USER } from "./chat_answers.ts";

/** One chunk of the UI message stream (only the kinds Floret writes). */
export type UiChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "error"; errorText: string }
  | { type: "finish" };

/** Headers of the UI message stream. */
export const UI_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  "x-vercel-ai-ui-message-stream": "v1",
};

const encoder = new TextEncoder();

/**
 * Encodes one chunk as an SSE `data:` line.
 *
 * @param chunk the chunk, or `"[DONE]"` for the end marker
 * @returns the bytes
 */
export function uiChunkBytes(chunk: UiChunk | "[DONE]"): Uint8Array {
  return encoder.encode(`data: ${chunk === "[DONE]" ? chunk : JSON.stringify(chunk)}\n\n`);
}

interface PartState {
  /** Characters of the item's text already written. */
  written: number;
  ended: boolean;
}

/**
 * Turns the items of one turn into chunks. It remembers what it has written,
 * so the same item seen again (in a view, an `add`, a `replace`) writes only
 * what is new.
 */
export class TurnChunks {
  #turnId: string | undefined;
  readonly #parts = new Map<string, PartState>();
  readonly #toolsStarted = new Set<string>();
  readonly #toolsDone = new Set<string>();
  readonly #queued: { requestKey: string; text: string; knownTurns: Set<string> } | undefined;
  #finished = false;
  #status: ThreadStatus | undefined;
  #pending: Interaction[] = [];
  /** Interactions already asked for on this stream. */
  readonly #asked = new Set<string>();
  /** A tool result was written since the last model output (see `#stepBoundary`). */
  #afterTool = false;

  /**
   * @param turnId the turn to follow; absent when the input was queued
   * @param queued when queued: its request key and text, and the turns that
   *   existed already, to find the turn that admits it
   */
  constructor(
    turnId: string | undefined,
    queued?: { requestKey: string; text: string; knownTurns: Set<string> },
  ) {
    this.#turnId = turnId;
    this.#queued = queued;
  }

  /** The turn followed (absent while a queued input waits for its turn). */
  get turnId(): string | undefined {
    return this.#turnId;
  }

  /** Whether the turn has ended (its `finish` was written). */
  get finished(): boolean {
    return this.#finished;
  }

  /**
   * Chunks for the turn's items and outcome (or wait) as a view shows them.
   *
   * @param view the view's items, turns, status and pending interactions
   * @returns the chunks not yet written
   */
  fromView(view: Pick<ThreadView, "items" | "turns" | "status" | "pending">): UiChunk[] {
    const out: UiChunk[] = [];
    if (this.#turnId === undefined) {
      this.#findQueuedTurn(view.items.map((item) => ({ op: "add", item })), out);
    }
    for (const item of view.items) this.#item(item, out);
    this.#status = view.status;
    this.#pending = view.pending;
    this.#turnsChanged(view.turns, out);
    this.#waitReached(out);
    return out;
  }

  /**
   * Takes everything a view shows as already written, its pending
   * interactions as already asked: a stream that continues a turn after an
   * approval sends only what comes next.
   *
   * @param view the view the client has already seen
   */
  skip(view: Pick<ThreadView, "items" | "pending">): void {
    // Items only: the turn's outcome, if it has one, still ends this stream.
    const written: UiChunk[] = [];
    for (const item of view.items) this.#item(item, written);
    for (const interaction of view.pending) this.#asked.add(interaction.id);
  }

  /**
   * Takes these tool calls as settled on the client: the `ask_user` calls
   * whose output the client itself sent, which the engine's result (the
   * answers, secrets redacted) must not overwrite.
   *
   * @param callIds the tool call ids
   */
  answered(callIds: string[]): void {
    for (const id of callIds) {
      this.#toolsStarted.add(id);
      this.#toolsDone.add(id);
    }
    if (callIds.length > 0) this.#afterTool = true;
  }

  /**
   * Chunks for one live update.
   *
   * @param update a batch (a `resync` is handled by the caller)
   * @returns the chunks not yet written
   */
  fromUpdate(update: ThreadUpdate & { type: "batch" }): UiChunk[] {
    const out: UiChunk[] = [];
    if (this.#turnId === undefined) this.#findQueuedTurn(update.ops, out);
    for (const op of update.ops) {
      if (this.#finished) break;
      this.#op(op, out);
    }
    this.#waitReached(out);
    return out;
  }

  /**
   * When the thread waits on this turn's interactions, ends the stream with a
   * request for each one not yet asked. An approval's tool call was streamed
   * before (its item comes first), so `useChat` can attach the request to it.
   */
  #waitReached(out: UiChunk[]): void {
    if (this.#finished || this.#status !== "waiting" || this.#turnId === undefined) return;
    const mine = this.#pending.filter((p) => p.status === "pending" && p.turnId === this.#turnId);
    if (mine.length === 0) return;
    this.#endParts(out);
    for (const interaction of mine) {
      if (this.#asked.has(interaction.id)) continue;
      this.#asked.add(interaction.id);
      if (interaction.kind === "approval" && interaction.callId !== undefined) {
        if (!this.#toolsStarted.has(interaction.callId)) {
          this.#toolsStarted.add(interaction.callId);
          this.#stepBoundary(out);
          out.push({
            type: "tool-input-available",
            toolCallId: interaction.callId,
            toolName: interaction.toolName ?? "tool",
            input: {},
          });
        }
        out.push({
          type: "tool-approval-request",
          approvalId: interaction.id,
          toolCallId: interaction.callId,
        });
      } else if (interaction.kind === "input") {
        // The question set as the call of a client-side tool: `addToolOutput`
        // answers it. A question with no call of its own goes by its interaction id.
        const toolCallId = interaction.callId ?? interaction.id;
        this.#toolsStarted.add(toolCallId);
        this.#stepBoundary(out);
        out.push({
          type: "tool-input-available",
          toolCallId,
          toolName: ASK_USER,
          input: { questions: interaction.questions ?? [] },
        });
      }
    }
    this.#finished = true;
    out.push({ type: "finish" });
  }

  #op(op: ViewOp, out: UiChunk[]): void {
    switch (op.op) {
      case "add":
      case "replace":
        this.#item(op.item, out);
        break;
      case "append-text": {
        const part = this.#parts.get(op.itemId);
        if (!part || part.ended) return;
        part.written += op.text.length;
        out.push({ type: this.#deltaType(op.itemId), id: op.itemId, delta: op.text });
        break;
      }
      case "remove":
        break;
      case "component":
        if (op.name === "turns") this.#turnsChanged(op.value as TurnSummary[], out);
        else if (op.name === "status") this.#status = op.value as ThreadStatus;
        else if (op.name === "pending") this.#pending = op.value as Interaction[];
        break;
      default: {
        const never: never = op;
        return never;
      }
    }
  }

  #kinds = new Map<string, "text" | "reasoning">();

  #deltaType(itemId: string): "text-delta" | "reasoning-delta" {
    return this.#kinds.get(itemId) === "reasoning" ? "reasoning-delta" : "text-delta";
  }

  #item(item: ThreadItem, out: UiChunk[]): void {
    if (this.#turnId === undefined || item.turnId !== this.#turnId) return;
    switch (item.kind) {
      case "assistant":
      case "thinking":
        return this.#textItem(item, item.kind === "thinking" ? "reasoning" : "text", out);
      case "tool":
        return this.#toolItem(item, out);
      case "user":
      case "interaction":
        // Approvals and questions are asked when the thread waits (`#waitReached`).
        return;
      default: {
        const never: never = item;
        return never;
      }
    }
  }

  #textItem(item: ThreadItem, kind: "text" | "reasoning", out: UiChunk[]): void {
    let part = this.#parts.get(item.id);
    if (!part) {
      part = { written: 0, ended: false };
      this.#parts.set(item.id, part);
      this.#kinds.set(item.id, kind);
      this.#stepBoundary(out);
      out.push({ type: `${kind}-start`, id: item.id });
    }
    if (part.ended) return;
    const text = item.text ?? "";
    if (text.length > part.written) {
      out.push({ type: `${kind}-delta`, id: item.id, delta: text.slice(part.written) });
      part.written = text.length;
    }
    if (!item.live) {
      part.ended = true;
      out.push({ type: `${kind}-end`, id: item.id });
    }
  }

  #toolItem(item: ThreadItem, out: UiChunk[]): void {
    const tool = item.tool;
    if (!tool) return;
    // An open question is shown when the thread waits on it, with the
    // questions as the engine checked them (`#waitReached`).
    if (tool.name === ASK_USER && !SETTLED.has(tool.status)) return;
    if (!this.#toolsStarted.has(tool.callId)) {
      this.#toolsStarted.add(tool.callId);
      this.#stepBoundary(out);
      out.push({
        type: "tool-input-available",
        toolCallId: tool.callId,
        toolName: tool.name,
        input: parseArguments(tool.arguments),
      });
    }
    if (this.#toolsDone.has(tool.callId)) return;
    if (tool.status === "completed") {
      this.#toolsDone.add(tool.callId);
      this.#afterTool = true;
      out.push({ type: "tool-output-available", toolCallId: tool.callId, output: tool.output });
    } else if (tool.status === "denied") {
      // The AI SDK's own end of a call the user refused.
      this.#toolsDone.add(tool.callId);
      this.#afterTool = true;
      out.push({ type: "tool-output-denied", toolCallId: tool.callId });
    } else if (["error", "cancelled", "unknown", "uncertain"].includes(tool.status)) {
      this.#toolsDone.add(tool.callId);
      this.#afterTool = true;
      out.push({
        type: "tool-output-error",
        toolCallId: tool.callId,
        errorText: tool.output ?? `Tool call ${tool.status}`,
      });
    }
  }

  #turnsChanged(turns: TurnSummary[], out: UiChunk[]): void {
    const turn = turns.find((t) => t.turnId === this.#turnId);
    if (!turn?.outcome || this.#finished) return;
    this.#endParts(out);
    if (turn.outcome === "failed" || turn.outcome === "interrupted") {
      // The failure code only: its message is the engine's, not the server's.
      out.push({ type: "error", errorText: `The turn ${turn.outcome}: ${turn.failure?.code}` });
    }
    this.#finished = true;
    out.push({ type: "finish" });
  }

  /**
   * Model output that follows a tool result belongs to the model's next step:
   * a `start-step` marks it, as the AI SDK's own streams do. Without it,
   * `lastAssistantMessageIsCompleteWithToolCalls` would find the turn's final
   * text in the step of its tool calls, take the message as waiting for
   * client tools, and post it again, forever.
   */
  #stepBoundary(out: UiChunk[]): void {
    if (!this.#afterTool) return;
    this.#afterTool = false;
    out.push({ type: "start-step" });
  }

  /** Ends every text and reasoning part still open. */
  #endParts(out: UiChunk[]): void {
    for (const [id, part] of this.#parts) {
      if (part.ended) continue;
      part.ended = true;
      out.push({ type: this.#kinds.get(id) === "reasoning" ? "reasoning-end" : "text-end", id });
    }
  }

  /**
   * A queued input becomes a turn whose user item carries its text; a queue
   * without the input and no such item means it was deleted from the queue.
   */
  #findQueuedTurn(ops: ViewOp[], out: UiChunk[]): void {
    const queued = this.#queued!;
    const admitted = ops.find((op) =>
      op.op === "add" && op.item.kind === "user" && op.item.text === queued.text &&
      !queued.knownTurns.has(op.item.turnId)
    );
    if (admitted?.op === "add") {
      this.#turnId = admitted.item.turnId;
      return;
    }
    const queue = ops.findLast((op) => op.op === "component" && op.name === "queue");
    if (queue?.op !== "component") return;
    const still = (queue.value as { requestKey: string }[]).some((q) =>
      q.requestKey === queued.requestKey
    );
    if (!still) {
      // Deleted from the queue: this message gets no answer.
      this.#finished = true;
      out.push({ type: "finish" });
    }
  }
}

/** Tool statuses after which a call changes no more. */
const SETTLED: ReadonlySet<string> = new Set([
  "completed",
  "denied",
  "error",
  "cancelled",
  "unknown",
]);

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
