/**
 * What every command shares: the journal, the actors, run wiring, request-key
 * replay and the admission of a new turn.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import type { Journal, RequestRecord } from "../journal/journal.ts";
import type { ActorCache } from "./actor_cache.ts";
import type { RunDeps } from "./run_driver.ts";
import { planSettlement } from "./settle_turn.ts";
import { retryStale } from "./stale_retry.ts";
import type { ThreadActor } from "./thread_actor.ts";

/** Shared state of one ThreadService. */
export interface ServiceContext {
  journal: Journal;
  actors: ActorCache;
  /** What runs need: observation, agent resolution, lease keeping. */
  runs: RunDeps;
  /** @throws {FloretError} `host_closed` after shutdown */
  assertOpen(): void;
}

/**
 * Looks a request key up: the committed result for a replay, `null` for a new key.
 *
 * @throws {FloretError} `request_conflict` when the key was used for another operation or input
 */
export async function replayOf(
  ctx: ServiceContext,
  scope: string,
  key: string,
  op: string,
  fingerprint: string,
): Promise<RequestRecord["result"] | null> {
  const record = await ctx.journal.request(scope, key);
  if (!record) return null;
  if (record.op !== op) {
    throw new FloretError(
      "request_conflict",
      `Request key was already used for ${record.op}: ${key}`,
    );
  }
  if (record.fingerprint !== fingerprint) {
    throw new FloretError(
      "request_conflict",
      `Request key was already used with different input: ${key}`,
    );
  }
  return record.result;
}

/** A request-keyed command on one thread. */
export interface ThreadCommand<T> {
  threadId: string;
  requestKey: string;
  /** The operation kind, part of the request key's identity. */
  op: string;
  /** SHA-256 of the normalised input. */
  fingerprint: string;
  /** The answer to a replay: built from the committed result. */
  replay(result: Record<string, unknown>, actor: ThreadActor): T;
  /** The command itself, for a key seen for the first time; it must claim the key in its commit. */
  run(actor: ThreadActor): Promise<T>;
}

/**
 * Runs a command in its thread's lock: refuses a closed host and a deleted
 * thread, answers a replayed key from the journal, and plans again when
 * another writer got there first.
 */
export async function threadCommand<T>(ctx: ServiceContext, command: ThreadCommand<T>): Promise<T> {
  const actor = await ctx.actors.get(command.threadId);
  return retryStale(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const committed = await replayOf(
        ctx,
        command.threadId,
        command.requestKey,
        command.op,
        command.fingerprint,
      );
      return committed ? command.replay(committed, actor) : await command.run(actor);
    })
  );
}

/** The request record a command commits to claim its key. */
export function claimOf(
  command: { threadId: string; requestKey: string; op: string; fingerprint: string },
  result: Record<string, unknown> = {},
): { scope: string; key: string; value: RequestRecord } {
  return {
    scope: command.threadId,
    key: command.requestKey,
    value: { op: command.op, fingerprint: command.fingerprint, result },
  };
}

/**
 * Settles a turn that is active in the journal but whose run is gone: it
 * died here on a store failure, or its host's lease lapsed. A turn running
 * on another live host is left alone. Call inside the actor's lock.
 */
export async function settleOrphan(actor: ThreadActor): Promise<void> {
  if (!actor.abandoned) return;
  const change = planSettlement(actor, "interrupted");
  if (change) await actor.commit(change);
}

/**
 * The actor of a thread, caught up with other hosts' writes unless this host
 * runs its turn (then memory is the freshest truth).
 *
 * @throws {FloretError} `thread_not_found`
 */
export async function freshActor(ctx: ServiceContext, threadId: string): Promise<ThreadActor> {
  const actor = await ctx.actors.get(threadId);
  if (!actor.run) await actor.exclusive(() => actor.sync());
  actor.assertLive();
  return actor;
}
