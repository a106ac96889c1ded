/**
 * Folds journal entries into the host's view of a thread (items, and turns
 * through turn_list.ts), and overlays the live, still-streaming output of the
 * running step. Every change is reported as a {@link ViewOp} so subscribers
 * can follow along.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { HostedToolCall } from "../../provider/gateway.ts";
import type { WebActivity } from "../../tools/web_activity.ts";
import type {
  ThreadItem,
  Todo,
  ToolItemStatus,
  TurnSummary,
  UserItem,
  ViewOp,
} from "./view_types.ts";
import type {
  Entry,
  StepEntry,
  ToolResultsEntry,
  TurnStartedEntry,
} from "../../journal/entries.ts";
import { type InteractionsReader, publicInteraction } from "../interactions.ts";
import { TODO_WRITE_TOOL, todosOf } from "../../tools/builtin_names.ts";
import { showsToolItem } from "./item_count.ts";
import { decodeStructured } from "../../journal/structured_codec.ts";
import { itemIds } from "./item_ids.ts";
import { TurnList } from "./turn_list.ts";
import type { OpSink } from "./op_sink.ts";
import { CowList } from "../cow_list.ts";
import { PairMap } from "../pair_map.ts";
import { appended } from "../appended.ts";
import { endedTool, withTool } from "./tool_item_shape.ts";
import { utf8Length } from "../../text/utf8_length.ts";

export type { OpSink } from "./op_sink.ts";

export { itemIds } from "./item_ids.ts";

/** What readers of a view may use: items, turns and lookups, none of the changes. */
export type ViewReader = Pick<
  ViewModel,
  "items" | "turns" | "item" | "indexOf" | "settledCount" | "seqOf" | "turnEndSeq" | "todos"
>;

/** A thread's items and turns, built from entries plus the live overlay. */
export class ViewModel {
  /** Never changed in place: an element is replaced, so shared copies stay as they were. */
  readonly items: CowList<ThreadItem> = new CowList();
  readonly #itemIndex = new Map<string, number>();
  // The journal position of each item, by its place in `items` (-1 for a live
  // item, made by no entry yet): an array of small integers beside the list,
  // not a second map of every item id.
  #itemSeqs: number[] = [];
  // The maps below are made on first use and the live one dropped when its last
  // item settles: an idle cached actor keeps no empty map for streams, tools or
  // interactions it no longer has (or never had).
  #liveBytes: Map<string, number> | undefined;
  /** `${runId}|${callId}` → tool item id of the latest step that made the call. */
  #toolItems: PairMap<string> | undefined;
  /** Interaction id → the item that shows it (a tool item or an interaction item). */
  #interactionItems: Map<string, string> | undefined;
  readonly #sink: OpSink;
  readonly #interactions: InteractionsReader;
  /** The latest list written by `todo_write`. */
  todos: Todo[] = [];
  readonly #turns: TurnList;

  /**
   * @param sink receives every change, in order
   * @param interactions the path's interactions, applied before this view sees each entry
   */
  constructor(sink: OpSink, interactions: InteractionsReader) {
    this.#sink = sink;
    this.#interactions = interactions;
    this.#turns = new TurnList(sink);
  }

  /** The turn summaries, as {@link items} never changed in place. */
  get turns(): CowList<TurnSummary> {
    return this.#turns.list;
  }

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    this.#turns.observe(entry);
    switch (entry.kind) {
      case "turn_started":
        return this.#turnStarted(entry);
      case "step":
        return this.#step(entry);
      case "tool_dispatched":
        for (const callId of entry.callIds) {
          this.#setToolStatus(entry.runId, callId, "running", entry.at);
        }
        for (const callId of entry.safe ?? []) {
          this.#setToolStatus(entry.runId, callId, "running", entry.at);
        }
        return;
      case "tool_results":
        this.#toolResults(entry);
        return this.#todosFrom(entry);
      case "turn_ended":
        this.#turns.ended(entry);
        return this.#refreshInteractions(entry.turnId);
      case "compaction":
      case "compaction_started":
        return; // context bookkeeping: no view item (see ContextModel)
      case "child_events":
      case "note":
        return; // provider messages only, never view items
      case "interaction_opened":
        return this.#interactionOpened(entry.interactionId, entry.seq);
      case "interaction_resolved":
        return this.#interactionResolved(entry.interactionId, entry.seq);
      case "steer": {
        return this.#add({
          id: itemIds.steer(entry.steerId),
          ordinal: 0,
          kind: "user",
          turnId: entry.turnId,
          createdAt: entry.at,
          text: entry.text,
        }, entry.seq);
      }
      default: {
        const never: never = entry;
        throw new Error(`Unhandled entry ${(never as Entry).kind}`);
      }
    }
  }

  /** Grows the live thinking or assistant item of a streaming step. */
  liveDelta(
    turnId: string,
    runId: string,
    step: number,
    kind: "thinking" | "assistant",
    delta: string,
  ): void {
    const id = kind === "thinking" ? itemIds.thinking(runId, step) : itemIds.assistant(runId, step);
    const index = this.#itemIndex.get(id);
    if (index === undefined) {
      this.#add({
        id,
        ordinal: 0,
        kind,
        turnId,
        runId,
        createdAt: nowIso(),
        text: delta,
        live: true,
      });
      (this.#liveBytes ??= new Map()).set(id, utf8Length(delta));
      return;
    }
    const item = this.items.at(index)!;
    // A stopped stream's delta after its step was settled (by a cancel) must not append.
    if (!item.live || (item.kind !== "thinking" && item.kind !== "assistant")) return;
    this.items.set(index, { ...item, text: item.text + delta });
    const live = this.#liveBytes ??= new Map();
    const offset = live.get(id) ?? 0;
    live.set(id, offset + utf8Length(delta));
    this.#emit(() => ({ op: "append-text", itemId: id, offset, text: delta }));
  }

  /** Removes the live items of a step whose attempt failed (a retry streams afresh). */
  dropLive(runId: string, step: number): void {
    if (!this.#liveBytes) return; // no live item at all (most steps): nothing to build ids for
    for (const id of [itemIds.assistant(runId, step), itemIds.thinking(runId, step)]) {
      const index = this.#itemIndex.get(id);
      if (index === undefined || !this.items.at(index)!.live) continue;
      this.items.removeAt(index);
      this.#itemSeqs.splice(index, 1);
      this.#itemIndex.delete(id);
      this.#settledLive(id);
      this.#reindexFrom(index);
      this.#emit(() => ({ op: "remove", itemId: id }));
    }
  }

  /** The journal position an item came from (for fork cuts). */
  seqOf(itemId: string): number | undefined {
    const index = this.#itemIndex.get(itemId);
    const seq = index === undefined ? -1 : this.#itemSeqs[index];
    return seq < 0 ? undefined : seq;
  }

  /** The seq of a turn's terminal entry, when it has ended. */
  turnEndSeq(turnId: string): number | undefined {
    return this.#turns.endSeq(turnId);
  }

  /** Where an item sits in {@link items} (its ordinal), without scanning them. */
  indexOf(itemId: string): number | undefined {
    return this.#itemIndex.get(itemId);
  }

  /** Items from committed entries (all but a streaming step's live ones): a new turn's first ordinal. */
  get settledCount(): number {
    return this.items.length - (this.#liveBytes?.size ?? 0);
  }

  /** Looks an item up by id. */
  item(itemId: string): ThreadItem | undefined {
    const index = this.#itemIndex.get(itemId);
    return index === undefined ? undefined : this.items.at(index);
  }

  #turnStarted(entry: TurnStartedEntry): void {
    this.#turns.started(entry);
    if (entry.input) {
      const item: UserItem = {
        id: itemIds.user(entry.turnId),
        ordinal: 0,
        kind: "user",
        turnId: entry.turnId,
        createdAt: entry.at,
        text: entry.input.text,
      };
      // Copies: the view hands out its items, the entry stays the journal's.
      const { references, context } = entry.input;
      if (references?.length) item.references = references.map((ref) => ({ ...ref }));
      if (context?.length) item.context = context.map((part) => ({ ...part }));
      this.#add(item, entry.seq);
    }
  }

  #step(entry: StepEntry): void {
    const { runId, step, turnId } = entry;
    if (entry.reasoning) {
      this.#settleText(itemIds.thinking(runId, step), "thinking", entry, entry.reasoning);
    }
    if (entry.text) {
      this.#settleText(itemIds.assistant(runId, step), "assistant", entry, entry.text);
    } else this.dropLive(runId, step);
    for (const call of entry.hosted ?? []) {
      this.#add(hostedToolItem(entry, call), entry.seq);
    }
    for (const call of entry.calls) {
      if (!showsToolItem(call)) continue;
      const id = itemIds.tool(runId, step, call.callId);
      (this.#toolItems ??= new PairMap()).set(runId, call.callId, id);
      // Allowed calls run as soon as the step is committed; others wait for their approval.
      const status: ToolItemStatus = call.decision === "deny"
        ? "denied"
        : call.decision === "ask"
        ? "waiting_approval"
        : "running";
      const tool: NonNullable<ThreadItem["tool"]> = {
        callId: call.callId,
        name: call.name,
        arguments: call.arguments,
        status,
      };
      // An allowed call is dispatched by the commit of its step.
      if (call.decision === "allow" && !call.repeated) tool.startedAt = entry.at;
      this.#add(
        { id, ordinal: 0, kind: "tool", turnId, runId, createdAt: entry.at, tool },
        entry.seq,
      );
    }
    this.#turns.addUsage(turnId, entry.usage);
  }

  #settleText(id: string, kind: "thinking" | "assistant", entry: StepEntry, text: string): void {
    this.#settledLive(id);
    const settled: ThreadItem = {
      id,
      ordinal: 0,
      kind,
      turnId: entry.turnId,
      runId: entry.runId,
      createdAt: entry.at,
      text,
    };
    if (kind === "assistant" && entry.sources?.length) {
      settled.sources = entry.sources.map((source) => ({ ...source }));
    }
    const index = this.#itemIndex.get(id);
    if (index === undefined) return this.#add(settled, entry.seq);
    this.#itemSeqs[index] = entry.seq;
    settled.ordinal = index;
    this.items.set(index, settled);
    if (this.#sink.hasSubscribers) this.#sink.push({ op: "replace", item: settled });
    else this.#sink.touch();
  }

  #toolResults(entry: ToolResultsEntry): void {
    for (const result of entry.results) {
      const id = this.#toolItems?.get(entry.runId, result.callId);
      const index = id === undefined ? undefined : this.#itemIndex.get(id);
      if (index === undefined) continue; // feedback for a rejected call
      const item = this.items.at(index)!;
      if (item.kind !== "tool") continue;
      const tool = endedTool(item.tool, result.status, result.output, result.artifactId, entry.at);
      if (result.structured !== undefined) {
        tool.structured = decodeStructured(result.structured, result.structuredTypes);
      }
      if (result.activity) tool.activity = structuredClone(result.activity);
      const updated = withTool(item, tool);
      this.#itemSeqs[index] = entry.seq;
      this.items.set(index, updated);
      if (this.#sink.hasSubscribers) this.#sink.push({ op: "replace", item: updated });
      else this.#sink.touch();
    }
  }

  #todosFrom(entry: ToolResultsEntry): void {
    for (const result of entry.results) {
      if (result.name !== TODO_WRITE_TOOL || result.status !== "completed") continue;
      const todos = todosOf(result.structured);
      if (!todos) continue;
      this.todos = todos;
      this.#emit(() => ({ op: "component", name: "todos", value: this.todos.slice() }));
    }
  }

  #interactionOpened(interactionId: string, seq: number): void {
    const state = this.#interactions.get(interactionId);
    if (!state) return;
    if (state.kind === "approval" && state.callId !== undefined) {
      const id = this.#toolItems?.get(state.runId, state.callId);
      if (id !== undefined) (this.#interactionItems ??= new Map()).set(interactionId, id);
    } else {
      const id = itemIds.interaction(interactionId);
      (this.#interactionItems ??= new Map()).set(interactionId, id);
      this.#add({
        id,
        ordinal: 0,
        kind: "interaction",
        turnId: state.turnId,
        runId: state.runId,
        createdAt: state.openedAt,
        interaction: publicInteraction(state),
      }, seq);
    }
    this.#showInteraction(interactionId);
    this.#emitPending();
  }

  #interactionResolved(interactionId: string, seq: number): void {
    const state = this.#interactions.get(interactionId);
    if (!state) return;
    const id = this.#interactionItems?.get(interactionId);
    if (id !== undefined && state.kind !== "approval") {
      // Its item was added when it opened, and only live items are ever removed.
      const index = this.#itemIndex.get(id);
      if (index !== undefined) this.#itemSeqs[index] = seq;
    }
    this.#showInteraction(interactionId);
    const resolution = state.resolution;
    if (state.kind === "approval" && state.callId !== undefined && resolution) {
      const status: ToolItemStatus = resolution.type === "decision"
        ? resolution.decision === "approve" ? "pending" : "denied"
        : "cancelled";
      this.#setToolStatus(state.runId, state.callId, status);
    }
    this.#emitPending();
  }

  /** Interactions a turn's end closed: their items show them resolved. */
  #refreshInteractions(turnId: string): void {
    if (!this.#interactionItems) return;
    let changed = false;
    for (const [interactionId, itemId] of this.#interactionItems) {
      const item = this.item(itemId);
      if (item?.turnId !== turnId || item.interaction?.status !== "pending") continue;
      this.#showInteraction(interactionId);
      changed = true;
    }
    if (changed) this.#emitPending();
  }

  #showInteraction(interactionId: string): void {
    const state = this.#interactions.get(interactionId);
    const id = this.#interactionItems?.get(interactionId);
    const index = id === undefined ? undefined : this.#itemIndex.get(id);
    if (!state || index === undefined) return;
    const item = this.items.at(index)!;
    const interaction = publicInteraction(state);
    let updated: ThreadItem;
    if (item.kind === "interaction") updated = { ...item, interaction };
    else if (item.kind === "tool" && interaction.kind === "approval") {
      updated = { ...item, interaction };
    } else return;
    this.items.set(index, updated);
    this.#emit(() => ({ op: "replace", item: updated }));
  }

  #emitPending(): void {
    this.#emit(() => ({
      op: "component",
      name: "pending",
      value: this.#interactions.pending().map(publicInteraction),
    }));
  }

  #setToolStatus(runId: string, callId: string, status: ToolItemStatus, startedAt?: string): void {
    const id = this.#toolItems?.get(runId, callId);
    const index = id === undefined ? undefined : this.#itemIndex.get(id);
    if (index === undefined) return;
    const item = this.items.at(index)!;
    if (item.kind !== "tool") return;
    const updated: ThreadItem = { ...item, tool: { ...item.tool, status } };
    if (startedAt !== undefined) updated.tool.startedAt ??= startedAt;
    this.items.set(index, updated);
    this.#emit(() => ({ op: "replace", item: updated }));
  }

  /** A live item settled or went: its stream count goes, and the map with the last one. */
  #settledLive(id: string): void {
    if (this.#liveBytes?.delete(id) && this.#liveBytes.size === 0) this.#liveBytes = undefined;
  }

  /** Appends an item made by the entry at `seq` (-1: a live item, made by none yet). */
  #add(item: ThreadItem, seq = -1): void {
    item.ordinal = this.items.length;
    this.#itemIndex.set(item.id, this.items.length);
    this.items.push(item);
    this.#itemSeqs = appended(this.#itemSeqs, seq);
    if (this.#sink.hasSubscribers) this.#sink.push({ op: "add", item: { ...item } });
    else this.#sink.touch();
  }

  #reindexFrom(start: number): void {
    for (let i = start; i < this.items.length; i++) {
      const moved = { ...this.items.at(i)!, ordinal: i };
      this.items.set(i, moved);
      this.#itemIndex.set(moved.id, i);
    }
  }

  /** Builds the op only when someone listens (a step's own ops do so in place, no closure each). */
  #emit(make: () => ViewOp): void {
    if (this.#sink.hasSubscribers) this.#sink.push(make());
    else this.#sink.touch();
  }
}

/**
 * The tool item of a call the provider ran itself: settled as it arrives
 * (the provider reports it once it ended), its query as the arguments and
 * its search as typed web activity.
 */
function hostedToolItem(entry: StepEntry, call: HostedToolCall): ThreadItem {
  const tool: NonNullable<ThreadItem["tool"]> = {
    callId: call.callId,
    name: call.name,
    arguments: JSON.stringify(call.query === undefined ? {} : { query: call.query }),
    status: call.status,
    hosted: true,
    startedAt: entry.at,
    endedAt: entry.at,
  };
  const web: WebActivity = { operation: "search" };
  if (call.query !== undefined) web.query = call.query;
  if (call.results) web.results = call.results.map((result) => ({ ...result }));
  tool.activity = {
    label: call.query === undefined ? "Searched the web" : `Searched: ${call.query}`,
    web,
  };
  return {
    id: itemIds.tool(entry.runId, entry.step, call.callId),
    ordinal: 0,
    kind: "tool",
    turnId: entry.turnId,
    runId: entry.runId,
    createdAt: entry.at,
    tool,
  };
}
