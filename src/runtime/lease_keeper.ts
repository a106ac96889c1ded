/**
 * Renews this host's leases on the turns it runs, so other hosts sharing the
 * store never take them for abandoned. Every commit renews a lease already;
 * this covers long model calls and long tools. The timer runs only while a
 * run lives, so an idle host keeps no timer.
 *
 * @module
 */
import type { ActorCache } from "./actor_cache.ts";
import { leaseNeedsRenewal, type Ownership } from "./ownership.ts";

/** Keeps leases of local runs fresh. */
export class LeaseKeeper {
  readonly #actors: ActorCache;
  readonly #ownership: Ownership;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running = 0;

  constructor(actors: ActorCache, ownership: Ownership) {
    this.#actors = actors;
    this.#ownership = ownership;
  }

  /** A run started here: its lease must be kept. */
  runStarted(): void {
    this.#running++;
    this.#timer ??= setInterval(() => this.#renew(), Math.max(10, this.#ownership.leaseTtlMs / 3));
  }

  /** A run ended here; with none left, the timer stops. */
  runEnded(): void {
    this.#running = Math.max(0, this.#running - 1);
    if (this.#running === 0) this.stop();
  }

  /** Stops the timer. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #renew(): void {
    for (const actor of this.#actors.all()) {
      if (!actor.run || !leaseNeedsRenewal(actor.record, this.#ownership)) continue;
      // Committing the unchanged record stamps a fresh lease on it.
      actor.exclusive(() => actor.run ? actor.commit({ record: actor.record }) : undefined).catch(
        // A conflict has reloaded the actor (and stopped a run whose turn was ended
        // elsewhere); a store failure is retried at the next tick.
        noop,
      );
    }
  }
}

function noop(): void {}
