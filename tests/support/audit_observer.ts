/**
 * A strict observer of one thread for the events audit: it follows DESIGN §8's
 * protocol (subscribe, then `view`, drop batches with `version ≤ viewVersion`,
 * apply the rest, read the view again after a gap or `resync`) and records
 * every breach it meets instead of papering over it: a gap, an `add` of an id
 * it already has, a `replace`/`remove`/`append-text` of an id it lacks, an
 * append whose UTF-8 offset is not the text's length.
 */
import type { ThreadItem, ThreadService, ThreadUpdate, ThreadView, ViewOp } from "@floret/engine";

const bytes = (text: string): number => new TextEncoder().encode(text).length;

/** A deep copy, as JSON would carry it (the views compared here hold JSON values only). */
export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A view without its process-local version, for comparing states. */
export function stateOf(view: ThreadView): Omit<ThreadView, "viewVersion"> {
  const { viewVersion: _, ...rest } = plain(view);
  return rest;
}

/**
 * Applies one batch's ops to `view` in place, as a host would, copying what
 * it takes from the ops. Breaches go to `problems`.
 */
export function applyOps(view: ThreadView, ops: readonly ViewOp[], problems: string[]): void {
  for (const op of ops) {
    switch (op.op) {
      case "add": {
        if (view.items.some((item) => item.id === op.item.id)) {
          problems.push(`add of an item already shown: ${op.item.id}`);
        }
        view.items.push(plain(op.item));
        break;
      }
      case "replace": {
        const index = view.items.findIndex((item) => item.id === op.item.id);
        if (index < 0) problems.push(`replace of an unknown item: ${op.item.id}`);
        else view.items[index] = plain(op.item);
        break;
      }
      case "append-text": {
        const item = view.items.find((candidate) => candidate.id === op.itemId) as
          | ThreadItem
          | undefined;
        if (!item) {
          problems.push(`append to an unknown item: ${op.itemId}`);
          break;
        }
        if (bytes(item.text ?? "") !== op.offset) {
          problems.push(`append at ${op.offset} to ${bytes(item.text ?? "")} bytes: ${op.itemId}`);
        }
        item.text = (item.text ?? "") + op.text;
        break;
      }
      case "remove": {
        const before = view.items.length;
        view.items = view.items.filter((item) => item.id !== op.itemId);
        if (view.items.length === before) problems.push(`remove of an unknown item: ${op.itemId}`);
        view.items.forEach((item, index) => (item.ordinal = index));
        break;
      }
      case "component": {
        const value = plain(op.value) as never;
        const target = view as unknown as Record<string, unknown>;
        if (op.name === "titleState") {
          const state = value as { title?: string; titleStatus: string; titleGeneration: number };
          target.titleStatus = state.titleStatus;
          target.titleGeneration = state.titleGeneration;
          if (state.title === undefined) delete target.title;
          else target.title = state.title;
        } else if (value === null) delete target[op.name];
        else target[op.name] = value;
        break;
      }
    }
  }
}

/** One subscriber that keeps its own copy of the view up to date. */
export class Observer {
  /** The observer's copy of the view. */
  local!: ThreadView;
  /** The version its copy stands at. */
  last = 0;
  /** The version of the view read at the join. */
  joinedAt = 0;
  /** Breaches of the protocol met so far (empty when all is well). */
  readonly problems: string[] = [];
  /** Every batch applied, in order. */
  readonly applied: Extract<ThreadUpdate, { type: "batch" }>[] = [];
  /** How many `resync`s came. */
  resyncs = 0;
  readonly #threads: ThreadService;
  readonly #threadId: string;
  readonly #updates: AsyncIterator<ThreadUpdate>;
  readonly #controller = new AbortController();

  private constructor(threads: ThreadService, threadId: string) {
    this.#threads = threads;
    this.#threadId = threadId;
    this.#updates = threads.subscribe(threadId, { signal: this.#controller.signal })
      [Symbol.asyncIterator]();
  }

  /** Subscribes, then reads the view (the order DESIGN §8 prescribes). */
  static async join(threads: ThreadService, threadId: string): Promise<Observer> {
    const observer = new Observer(threads, threadId);
    await observer.#readView();
    observer.joinedAt = observer.last;
    return observer;
  }

  async #readView(): Promise<void> {
    this.local = plain(await this.#threads.view(this.#threadId));
    this.last = this.local.viewVersion;
  }

  /** Reads updates until its copy stands at `version` or later. */
  async until(version: number): Promise<void> {
    while (this.last < version) {
      const next = await this.#updates.next();
      if (next.done) throw new Error(`the subscription ended at ${this.last}, before ${version}`);
      const update = next.value;
      if (update.type === "resync") {
        this.resyncs++;
        await this.#readView();
        continue;
      }
      if (update.version <= this.last) continue;
      if (update.baseVersion !== this.last) {
        this.problems.push(`gap: at ${this.last}, got ${update.baseVersion} -> ${update.version}`);
      }
      applyOps(this.local, update.ops, this.problems);
      this.local.viewVersion = update.version;
      this.last = update.version;
      this.applied.push(plain(update));
    }
  }

  /** Reads until its copy has caught up with `view`. */
  async reach(view: ThreadView): Promise<void> {
    await this.until(view.viewVersion);
  }

  /** Ends the subscription. */
  async leave(): Promise<void> {
    this.#controller.abort();
    await this.#updates.return?.();
  }
}
