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
import { StaleThreadError } from "./thread_actor.ts";

/** Keeps leases of local runs fresh. */
export class LeaseKeeper {
  readonly #actors: ActorCache;
  readonly #ownership: Ownership;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(actors: ActorCache, ownership: Ownership) {
    this.#actors = actors;
    this.#ownership = ownership;
  }

  /** Starts or stops the timer to match whether any run lives here. */
  update(): void {
    const running = this.#actors.all().some((actor) => actor.run);
    if (running && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#renew(), Math.max(10, this.#ownership.leaseTtlMs / 3));
    } else if (!running) {
      this.stop();
    }
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
        (error) => {
          if (!(error instanceof StaleThreadError)) return; // a store failure: the next tick tries again
        },
      );
    }
    this.update();
  }
}
