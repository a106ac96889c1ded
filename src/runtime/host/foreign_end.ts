/**
 * How a host running a turn learns, within about a second, that another
 * host ended that turn (a cancel, a delete, a settle after a lapsed lease).
 *
 * Another host's write rewrites the thread record, so its version moves. A
 * run commits only at the end of its steps, and only then would its version
 * check fail and the actor reload: during a long model stream (or a long
 * tool) that took a whole lease tick, about 10 s, while the run kept
 * streaming. So at every lease tick (every {@link WATCH_MS} while runs live)
 * the keeper reads the record's version of each thread running here, a
 * one-key read; only when it moved is the record read, and only when the
 * active turn is no longer this run's does the actor reload (which stops the
 * run). A foreign write that leaves the turn running (a title, a queued
 * message) is left to the run's next commit, as before: reloading mid-stream
 * would drop the live text shown so far.
 *
 * @module
 */
import type { ThreadActor } from "../actor/thread_actor.ts";

/** How often a running turn's record is looked at (at most; the lease tick may be shorter). */
export const WATCH_MS = 500;

/** Looks for turns of this host's runs that another host ended. */
export class ForeignEndWatch {
  /** Threads whose look is under way (one at a time per thread). */
  readonly #looking = new Set<string>();
  /** Per thread, the foreign version already read that left the run its turn. */
  readonly #seen = new Map<string, string>();

  /** One look at `actor`, whose run is on this host; failures wait for the next tick. */
  look(actor: ThreadActor): void {
    const threadId = actor.threadId;
    if (this.#looking.has(threadId)) return;
    this.#looking.add(threadId);
    this.#look(actor).catch(noop).finally(() => this.#looking.delete(threadId));
  }

  /** Forgets threads that run no more here. */
  prune(running: ReadonlySet<string>): void {
    for (const threadId of this.#seen.keys()) {
      if (!running.has(threadId)) this.#seen.delete(threadId);
    }
  }

  async #look(actor: ThreadActor): Promise<void> {
    const run = actor.run;
    if (!run) return;
    const known = actor.versioned.version;
    const version = await actor.journal.threadVersion(actor.threadId);
    if (version === known || version === this.#seen.get(actor.threadId)) return;
    const current = await actor.journal.thread(actor.threadId);
    if (!current || actor.run !== run) return;
    // Our own commit that landed but has not been applied yet shows the same turn: nothing to do.
    if (!current.record.deleted && current.record.active?.runId === run.runId) {
      this.#seen.set(actor.threadId, current.version);
      return;
    }
    // The turn is no longer this run's: the reload (in the thread's order) stops the run.
    await actor.exclusive(() => (actor.run === run ? actor.sync() : undefined));
  }
}

function noop(): void {}
