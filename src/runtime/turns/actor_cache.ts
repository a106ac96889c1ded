/**
 * The actors of this process, loaded on demand (one load per thread at a
 * time) and dropped when idle and unobserved beyond a bound.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import type { Journal, VersionedRecord } from "../../journal/journal.ts";
import { settleWhenStoreAnswers } from "./failed_commit.ts";
import { Publisher } from "../actor/publisher.ts";
import { StoreProbes } from "./store_probe.ts";
import { ThreadActor } from "../actor/thread_actor.ts";
import type { Ownership } from "../actor/ownership.ts";

/** Idle actors kept in memory before the oldest is dropped. */
export const MAX_IDLE_ACTORS = 512;

/** Loads, caches and evicts thread actors. */
export class ActorCache {
  readonly #journal: Journal;
  readonly #ownership: Ownership;
  readonly #actors = new Map<string, ThreadActor>();
  readonly #loading = new Map<string, Promise<ThreadActor | null>>();
  readonly #publishers = new Map<string, Publisher>();
  readonly #probes = new StoreProbes();

  constructor(journal: Journal, ownership: Ownership) {
    this.#journal = journal;
    this.#ownership = ownership;
  }

  /** The publisher of a thread, created on first use so subscribers can register at once. */
  publisher(threadId: string): Publisher {
    let publisher = this.#publishers.get(threadId);
    if (!publisher) {
      publisher = new Publisher();
      this.#publishers.set(threadId, publisher);
    }
    return publisher;
  }

  /**
   * The actor of a thread.
   *
   * @throws {FloretError} `thread_not_found` for a missing or deleted thread
   */
  async get(threadId: string): Promise<ThreadActor> {
    const cached = this.#actors.get(threadId);
    if (cached) return cached;
    let loading = this.#loading.get(threadId);
    if (!loading) {
      loading = ThreadActor.load(
        this.#journal,
        threadId,
        this.publisher(threadId),
        this.#ownership,
        (actor) => this.settleWhenStoreAnswers(actor),
      );
      this.#loading.set(threadId, loading);
      loading.then((actor) => {
        if (actor) this.#actors.set(threadId, actor);
      }, () => {}).finally(() => this.#loading.delete(threadId));
    }
    const actor = await loading;
    if (!actor) {
      if (!this.#publishers.get(threadId)?.hasSubscribers) this.#publishers.delete(threadId);
      throw new FloretError("thread_not_found", `Thread not found: ${threadId}`);
    }
    return actor;
  }

  /**
   * The actor of a thread this process has just created (no entries, no fork
   * base), from what its creating commit wrote, without reading it back; an
   * actor already loaded or loading (a replay of the same create) wins.
   *
   * @returns the new actor, or (when one was already loaded or loading) a promise of that one
   */
  created(created: VersionedRecord): ThreadActor | Promise<ThreadActor> {
    const threadId = created.record.id;
    if (this.#actors.has(threadId) || this.#loading.has(threadId)) return this.get(threadId);
    const actor = ThreadActor.created(
      this.#journal,
      created,
      this.publisher(threadId),
      this.#ownership,
      (actor) => this.settleWhenStoreAnswers(actor),
    );
    this.#actors.set(threadId, actor);
    return actor;
  }

  /**
   * The actor of a thread, caught up with other hosts' writes unless this
   * host runs its turn (then memory is the freshest truth).
   *
   * @throws {FloretError} `thread_not_found` for a missing or deleted thread
   */
  async fresh(threadId: string): Promise<ThreadActor> {
    const actor = await this.get(threadId);
    if (!actor.run) await actor.exclusive(() => actor.sync());
    actor.assertLive();
    return actor;
  }

  /**
   * A commit on `actor` failed, or a run died on one: once the store answers
   * again, read the thread afresh and settle a turn left without a run.
   */
  settleWhenStoreAnswers(actor: ThreadActor): void {
    settleWhenStoreAnswers(this.#probes, actor);
  }

  /** Stops probing stores (shutdown). */
  stopProbes(): void {
    this.#probes.stop();
  }

  /**
   * Runs `use` on a thread's actor: in this tick when the actor is in memory
   * (nearly always: the thread was just created or used), so a command asks
   * for the thread's lock in the order it was called; otherwise once loaded.
   *
   * @throws {FloretError} `thread_not_found` for a missing or deleted thread (as a rejection)
   */
  withActor<T>(threadId: string, use: (actor: ThreadActor) => Promise<T>): Promise<T> {
    const actor = this.#actors.get(threadId);
    return actor === undefined ? this.get(threadId).then(use) : use(actor);
  }

  /** The actor of a thread if it is in memory. */
  loaded(threadId: string): ThreadActor | undefined {
    return this.#actors.get(threadId);
  }

  /** Every loaded actor. */
  all(): ThreadActor[] {
    return [...this.#actors.values()];
  }

  /**
   * Drops the publisher of a thread that has no actor here and nobody
   * subscribed: a subscription to an id that names no thread made one, and
   * each such id (any client can send them over HTTP) would otherwise stay.
   *
   * @param threadId the id a subscription named
   */
  dropUnobserved(threadId: string): void {
    if (this.#actors.has(threadId) || this.#loading.has(threadId)) return;
    if (!this.#publishers.get(threadId)?.hasSubscribers) this.#publishers.delete(threadId);
  }

  /** Forgets a thread (deleted): its subscribers are ended. */
  forget(threadId: string): void {
    this.#actors.delete(threadId);
    this.#publishers.get(threadId)?.close();
    this.#publishers.delete(threadId);
  }

  /** Drops idle, unobserved actors beyond {@link MAX_IDLE_ACTORS}, oldest first. */
  trim(): void {
    if (this.#actors.size <= MAX_IDLE_ACTORS) return;
    for (const [threadId, actor] of this.#actors) {
      if (this.#actors.size <= MAX_IDLE_ACTORS) return;
      if (!actor.quiet) continue;
      this.#actors.delete(threadId);
      this.#publishers.delete(threadId);
    }
  }
}
