/**
 * One turn as the AI SDK's UI message stream (protocol v1): the turn's items
 * become `text-*`, `reasoning-*` and `tool-*` chunks, read first from a view
 * (which makes a replay the committed turn) and then from live batches, until
 * the turn has an outcome; then `finish` and `[DONE]`.
 *
 * @module
 */
import type { ThreadItem, ThreadUpdate, TurnSummary, ViewOp } from "@floret/engine";

/** One chunk of the UI message stream (only the kinds Floret writes). */
export type UiChunk =
  | { type: "start"; messageId?: string }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
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

  /** Whether the turn has ended (its `finish` was written). */
  get finished(): boolean {
    return this.#finished;
  }

  /**
   * Chunks for the turn's items and outcome as a view shows them.
   *
   * @param items the view's items
   * @param turns the view's turns
   * @returns the chunks not yet written
   */
  fromView(items: ThreadItem[], turns: TurnSummary[]): UiChunk[] {
    const out: UiChunk[] = [];
    if (this.#turnId === undefined) {
      this.#findQueuedTurn(items.map((item) => ({ op: "add", item })), out);
    }
    for (const item of items) this.#item(item, out);
    this.#turnsChanged(turns, out);
    return out;
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
    return out;
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
        // Hook: approvals and questions are answered through `respond`; a UI
        // reads them from the thread's view (`pending`).
        return;
      default: {
        const never: never = item.kind;
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
    if (!this.#toolsStarted.has(tool.callId)) {
      this.#toolsStarted.add(tool.callId);
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
      out.push({ type: "tool-output-available", toolCallId: tool.callId, output: tool.output });
    } else if (["error", "denied", "cancelled", "unknown"].includes(tool.status)) {
      this.#toolsDone.add(tool.callId);
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
    for (const [id, part] of this.#parts) {
      if (part.ended) continue;
      part.ended = true;
      out.push({ type: this.#kinds.get(id) === "reasoning" ? "reasoning-end" : "text-end", id });
    }
    if (turn.outcome === "failed" || turn.outcome === "interrupted") {
      // The failure code only: its message is the engine's, not the server's.
      out.push({ type: "error", errorText: `The turn ${turn.outcome}: ${turn.failure?.code}` });
    }
    this.#finished = true;
    out.push({ type: "finish" });
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

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
