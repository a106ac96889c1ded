/**
 * What every command shares: the journal, the actors, run wiring, request-key
 * replay and the admission of a new turn.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { FloretError } from "../errors.ts";
import { newId } from "../identity/ids.ts";
import type { AdmittedInput, NewEntry, SupplementalContext } from "../journal/entries.ts";
import type { Journal, RequestRecord } from "../journal/journal.ts";
import type { ThreadRecord } from "../journal/thread_record.ts";
import type { ObservationEvent } from "../observation/events.ts";
import type { ActorCache } from "./actor_cache.ts";
import { type RunDeps, startRun } from "./run_driver.ts";
import { planSettlement } from "./settle_turn.ts";
import { StaleThreadError, type ThreadActor } from "./thread_actor.ts";

/** Shared state of one ThreadService. */
export interface ServiceContext {
  journal: Journal;
  actors: ActorCache;
  runDeps: RunDeps;
  observe(event: ObservationEvent): void;
  resolveAgent(threadId: string, turnId: string): Promise<Agent>;
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
  return withStaleRetry(() =>
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

/** Retries a command whose commit lost a race with another writer (the actor has reloaded). */
export async function withStaleRetry<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1;; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof StaleThreadError) || tries >= 5) throw error;
    }
  }
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

/** What a new turn starts from. */
export interface Admission {
  requestKey: string;
  input?: AdmittedInput;
  supplementalContext?: SupplementalContext[];
  retryOf?: { turnId: string; mode: "resume" | "regenerate" };
  /** The record change besides the admission itself (e.g. a queue item removed). */
  record?: (record: ThreadRecord) => ThreadRecord;
  /** The request key claimed by this command, with its result. */
  claim: {
    requestKey: string;
    op: string;
    fingerprint: string;
    result: (turnId: string) => Record<string, unknown>;
  };
}

/**
 * Admits a turn in one commit and starts its run. Call inside the actor's
 * lock on an idle thread.
 *
 * @returns the new turn's id
 */
export async function admitTurn(
  ctx: ServiceContext,
  actor: ThreadActor,
  admission: Admission,
): Promise<string> {
  const turnId = newId("turn");
  const runId = newId("run");
  const agent = await ctx.resolveAgent(actor.threadId, turnId);
  if (admission.input?.attachments?.length && agent.gateway.info.capabilities.images === false) {
    throw new FloretError(
      "invalid_input",
      `Model ${agent.gateway.info.model} does not accept images`,
    );
  }
  const started: NewEntry = {
    kind: "turn_started",
    turnId,
    runId,
    agentId: agent.id,
    requestKey: admission.requestKey,
  };
  if (admission.input) started.input = admission.input;
  if (admission.supplementalContext?.length) {
    started.supplementalContext = admission.supplementalContext;
  }
  if (admission.retryOf) started.retryOf = admission.retryOf;
  const base = admission.record ? admission.record(actor.record) : actor.record;
  const record: ThreadRecord = {
    ...base,
    status: "running",
    active: { turnId, runId },
    lastTurn: { turnId, retryable: true },
    updatedAt: new Date().toISOString(),
  };
  const { claim } = admission;
  await actor.commit({
    record,
    entries: [started],
    request: claimOf({ ...claim, threadId: actor.threadId }, claim.result(turnId)),
  });
  ctx.observe({
    type: "turn.started",
    threadId: actor.threadId,
    turnId,
    runId,
    at: new Date().toISOString(),
  });
  startRun(actor, agent, turnId, runId, ctx.runDeps);
  return turnId;
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
