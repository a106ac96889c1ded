/**
 * Renews this host's leases on the turns it runs, so other hosts sharing the
 * store never take them for abandoned. Every commit renews a lease already;
 * this covers long model calls and long tools. The same tick looks for turns
 * of local runs that another host ended (foreign_end.ts), so a cancel on
 * another host stops the run within about a second.
 *
 * The timer must not keep an idle host's process alive. Where the runtime's
 * timer handle can be unreferenced (Node, Bun), the last run's end
 * unreferences it and the next run's start references it again, and an idle
 * tick clears it: a host that runs one short turn after another (every
 * conversation starts a run) arms one timer, not one per run. Elsewhere the
 * last run's end clears it, as before.
 *
 * @module
 */
import type { ActorCache } from "../turns/actor_cache.ts";
import { leaseNeedsRenewal, type Ownership } from "../actor/ownership.ts";
import { ForeignEndWatch, WATCH_MS } from "./foreign_end.ts";

type TimerHandle = ReturnType<typeof setInterval>;

/** A timer handle that can stop keeping the process alive (Node's `Timeout`, Bun's `Timer`). */
interface Unreferenced {
  ref(): unknown;
  unref(): unknown;
}

/** Keeps leases of local runs fresh. */
export class LeaseKeeper {
  readonly #actors: ActorCache;
  readonly #ownership: Ownership;
  #timer: TimerHandle | undefined;
  /** Whether `#timer` holds the process (it does while runs live). */
  #referenced = false;
  #running = 0;
  /** Shut down: no timer is armed again (a run that starts late must not hold the process). */
  #closed = false;
  readonly #tick: () => void;
  readonly #watch = new ForeignEndWatch();

  constructor(actors: ActorCache, ownership: Ownership) {
    this.#actors = actors;
    this.#ownership = ownership;
    // Made once per host, not per timer.
    this.#tick = () => this.#renew();
  }

  /** A run started here: its lease must be kept. */
  runStarted(): void {
    this.#running++;
    if (this.#closed) return;
    if (this.#timer === undefined) {
      // Renewals wait for a third of the lease (leaseNeedsRenewal): a tick more often than
      // that costs one version read per running thread, not a write.
      const every = Math.min(WATCH_MS, this.#ownership.leaseTtlMs / 3);
      this.#timer = setInterval(this.#tick, Math.max(10, every));
      this.#referenced = true;
    } else if (!this.#referenced) {
      (this.#timer as unknown as Unreferenced).ref();
      this.#referenced = true;
    }
  }

  /** A run ended here; with none left, the timer no longer holds the process. */
  runEnded(): void {
    this.#running = Math.max(0, this.#running - 1);
    if (this.#running > 0 || this.#timer === undefined) return;
    const handle = this.#timer as unknown as Partial<Unreferenced>;
    if (typeof handle.unref === "function") {
      handle.unref();
      this.#referenced = false;
    } else this.stop();
  }

  /** Stops the timer for good (shutdown): later runs arm none. */
  close(): void {
    this.#closed = true;
    this.stop();
  }

  /** Stops the timer. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#referenced = false;
  }

  #renew(): void {
    // A tick with no run left (the timer was only unreferenced): the timer goes.
    if (this.#running === 0) {
      this.stop();
      return;
    }
    const running = new Set<string>();
    for (const actor of this.#actors.all()) {
      if (!actor.run) continue;
      running.add(actor.threadId);
      this.#watch.look(actor);
      if (!leaseNeedsRenewal(actor.record, this.#ownership)) continue;
      // Committing the unchanged record stamps a fresh lease on it.
      actor.exclusive(() => actor.run ? actor.commit({ record: actor.record }) : undefined).catch(
        // A conflict has reloaded the actor (and stopped a run whose turn was ended
        // elsewhere); a store failure is retried at the next tick.
        noop,
      );
    }
    this.#watch.prune(running);
  }
}

function noop(): void {}
