/**
 * Thread titles over their life: a fallback title installed with the first
 * accepted message, an optional generated title requested in the background,
 * and host titles, which always win. Each host title and each generation
 * claim bumps `titleGeneration`; a generated title installs only while its
 * claim's generation is still the record's, so a late one is dropped.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { Agent } from "../../config/agent.ts";
import { requestTitle, TITLE_TIMEOUT_MS } from "../../engine/attempt/title_request.ts";
import type { AdmittedInput } from "../../journal/entries.ts";
import type { Journal } from "../../journal/journal.ts";
import { keys } from "../../journal/keys.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import type { ObservationEvent } from "../../observation/events.ts";
import { fallbackTitle, titleStateOf } from "../../projection/view/title_state.ts";
import type { ActorCache } from "./actor_cache.ts";
import type { Ownership } from "../actor/ownership.ts";
import { retryStale } from "../actor/stale_retry.ts";

/** How long after its start a claim may still install a title (the request's limit plus slack). */
export const TITLE_CLAIM_MS = TITLE_TIMEOUT_MS + 5_000;

/** A record with the first message's title applied, and the claim to run, if any. */
export interface FirstMessageTitle {
  /** A fresh copy of the record given, the caller's to change, with the title applied if any. */
  record: ThreadRecord;
  /** Set when a generated title should be requested under this generation. */
  claim?: number;
}

/**
 * Applies the title rules of a first accepted message to the record about to
 * be committed with it: nothing when the thread already has a title (or a
 * claim); otherwise the fallback title, and for a `provider` agent being
 * admitted, a pending claim under the next generation. (A first message that
 * only queues gets the fallback; no title is generated for it.)
 *
 * @param record the record the commit writes
 * @param input the admitted or queued input
 * @param agent the turn's agent (absent when the input is only queued)
 * @param hostId this host, the owner of a claim
 * @returns a copy of `record` (always a copy, so a caller sets its own fields on it in place,
 *   keeping the key order a spread would give, instead of copying it again), and the claim
 */
export function firstMessageTitle(
  record: ThreadRecord,
  input: AdmittedInput | undefined,
  agent: Agent | undefined,
  hostId: string,
): FirstMessageTitle {
  const next: ThreadRecord = { ...record };
  const state = titleStateOf(record);
  if (!input || state.titleStatus !== "none") return { record: next };
  const fallback = fallbackTitle(input);
  if (fallback !== undefined) {
    next.title = fallback;
    next.titleStatus = "fallback";
  }
  if (agent?.titles !== "provider") return { record: next };
  const generation = state.titleGeneration + 1;
  next.titleStatus = "pending";
  next.titleGeneration = generation;
  next.titleClaim = { generation, owner: hostId, until: Date.now() + TITLE_CLAIM_MS };
  return { record: next, claim: generation };
}

/** A host title: `ready`, the next generation, any claim void. */
export function hostTitle(record: ThreadRecord, title: string): ThreadRecord {
  const next: ThreadRecord = {
    ...record,
    title,
    titleStatus: "ready",
    titleGeneration: titleStateOf(record).titleGeneration + 1,
  };
  delete next.titleClaim;
  return next;
}

/** The title a fork starts with: its source's, except that a claim is not inherited. */
export function inheritedTitle(source: ThreadRecord): Partial<ThreadRecord> {
  const state = titleStateOf(source);
  const title: Partial<ThreadRecord> = {
    titleStatus: state.titleStatus === "pending" ? "fallback" : state.titleStatus,
    titleGeneration: state.titleGeneration,
  };
  if (state.title !== undefined) title.title = state.title;
  if (title.titleStatus === "fallback" && state.title === undefined) title.titleStatus = "none";
  return title;
}

/** A claim that will never install: the fallback title, if any, stays. */
function endClaim(record: ThreadRecord, status: "fallback" | "failed"): ThreadRecord {
  const next: ThreadRecord = {
    ...record,
    titleStatus: status === "failed" ? "failed" : record.title === undefined ? "none" : "fallback",
  };
  delete next.titleClaim;
  return next;
}

/** The background title requests of one host. */
export class TitleJobs {
  readonly #actors: ActorCache;
  readonly #observe: (event: ObservationEvent) => void;
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<void>>();

  /**
   * @param actors where the threads' actors live
   * @param observe observation events (`title.ready`, `title.failed`, `title.dropped`)
   */
  constructor(actors: ActorCache, observe: (event: ObservationEvent) => void) {
    this.#actors = actors;
    this.#observe = observe;
  }

  /** Starts a title request for a claim just committed; it never blocks the caller. */
  start(threadId: string, agent: Agent, input: AdmittedInput, generation: number): void {
    if (this.#abort.signal.aborted) return;
    const job = this.#run(threadId, agent, input, generation).catch(() => {});
    this.#running.add(job);
    job.finally(() => this.#running.delete(job));
  }

  /** Aborts every request in flight and waits for them; their claims stay pending (settled at the next start). */
  async stop(): Promise<void> {
    this.#abort.abort(new DOMException("The host is shutting down", "AbortError"));
    await Promise.all(this.#running);
  }

  async #run(threadId: string, agent: Agent, input: AdmittedInput, generation: number) {
    let title: string | undefined;
    let problem: string | undefined;
    try {
      title = await requestTitle(agent, input.text, this.#abort.signal);
      if (title === undefined) problem = "The title answer had no text";
    } catch (error) {
      if (this.#abort.signal.aborted) return; // shutdown: left pending, as after a crash
      problem = error instanceof Error ? error.message : String(error);
    }
    const installed = await this.#install(threadId, generation, title);
    const at = nowIso();
    if (!installed) this.#observe({ type: "title.dropped", threadId, at, generation });
    else if (title !== undefined) this.#observe({ type: "title.ready", threadId, at, generation });
    else {
      this.#observe({
        type: "title.failed",
        threadId,
        at,
        generation,
        message: problem?.slice(0, 200),
      });
    }
  }

  /** Commits the outcome while the claim still holds; `false` when it no longer does. */
  async #install(threadId: string, generation: number, title: string | undefined) {
    const actor = await this.#actors.get(threadId).catch(() => undefined);
    if (!actor) return false;
    return await retryStale(() =>
      actor.exclusive(async () => {
        if (!actor.run) await actor.sync();
        const record = actor.record;
        const claim = record.titleClaim;
        if (
          record.deleted || record.titleStatus !== "pending" || !claim ||
          claim.generation !== generation || claim.owner !== actor.ownership.hostId ||
          claim.until < Date.now()
        ) return false;
        const next = title === undefined
          ? endClaim(record, "failed")
          : { ...endClaim(record, "failed"), title, titleStatus: "ready" as const };
        await actor.commit({
          record: { ...next, updatedAt: nowIso() },
          delete: [keys.titlePending(threadId)],
        });
        return true;
      })
    );
  }
}

/**
 * Settles title claims a previous process left pending: the fallback title
 * stays, status `fallback`. Claims of other hosts are left alone while they
 * may still install, unless `all` (a restore, where no other host runs).
 *
 * @returns how many claims were settled
 */
export async function settleTitleClaims(
  journal: Journal,
  ownership: Ownership,
  all: boolean,
): Promise<number> {
  let settled = 0;
  for (const threadId of await journal.idsUnder(keys.titlePendingAll())) {
    for (let attempt = 0; attempt < 8; attempt++) {
      const current = await journal.thread(threadId);
      if (!current) {
        await journal.store.commit({ delete: [keys.titlePending(threadId)] });
        break;
      }
      const { record } = current;
      const claim = record.titleStatus === "pending" ? record.titleClaim : undefined;
      if (claim && !all && claim.owner !== ownership.hostId && claim.until >= Date.now()) break;
      const version = await journal.commit({
        expected: current,
        record: claim && !record.deleted ? endClaim(record, "fallback") : record,
        delete: [keys.titlePending(threadId)],
      });
      if (version !== null) {
        if (claim) settled++;
        break;
      }
    }
  }
  return settled;
}
