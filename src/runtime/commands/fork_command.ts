/**
 * `fork`: a new root thread that reads its source's path up to a chosen item.
 * Nothing is copied: the fork's record points at the source and the cut, and
 * only a settlement of a turn cut in half is written.
 *
 * @module
 */
import { consistentRead, PathCheck } from "../../journal/consistent_read.ts";
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { Entry, NewEntry, TurnOutcome } from "../../journal/entries.ts";
import { keys, tenantScope } from "../../journal/keys.ts";
import { ContextModel } from "../../projection/history/context_model.ts";
import { OpenCalls, settleOpenCalls } from "../../projection/open_calls.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { claimOf, type CommandKey, commandKeyNow, replayOf, withKey } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { retryStale, StaleThreadError } from "../actor/stale_retry.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { inheritedTitle } from "../turns/titles.ts";
import { inheritedSurface } from "../turns/surface_record.ts";
import { STOPPED, stoppedRecord } from "../turns/unfinished_compactions.ts";

/** A fork's command: the source thread, the cut and the store-scoped key. */
type ForkCommand = { threadId: string; requestKey: string; atItemId?: string };

/**
 * Forks a thread at an item (default: its end). Keyed at once, and a source
 * in memory is taken as it is, so the fork asks for the source's lock in the
 * tick it was called: `fork()` then `send()` issued without awaiting cut
 * before the sent message, as issued.
 */
export function fork(
  ctx: ServiceContext,
  command: ForkCommand,
): Promise<{ threadId: string; view: ThreadView }> {
  const { threadId, atItemId } = command;
  return withKey(
    commandKeyNow(command, "fork", { threadId, atItemId: atItemId ?? null }),
    (key) => ctx.actors.withActor(threadId, (source) => forkFrom(ctx, source, key, command)),
  );
}

/** {@link fork} from the source's actor. */
function forkFrom(
  ctx: ServiceContext,
  source: ThreadActor,
  key: CommandKey,
  command: ForkCommand,
): Promise<{ threadId: string; view: ThreadView }> {
  const { threadId, atItemId } = command;
  let replanned = false;
  return retryStale(async () => {
    ctx.assertOpen();
    // The replay is looked up in the source's lock, the first thing asked for.
    const plan = await source.exclusive(async () => {
      // Fork keys are scoped to the source's tenant, like its creates.
      const replay = await replayOf(ctx.journal, tenantScope(source.record.tenant), key);
      if (replay) return { replayed: replay.threadId as string };
      // The source moved since the last plan: unless it runs here, another host wrote it.
      if (replanned && !source.run) await source.sync();
      replanned = true;
      source.assertLive();
      const cut = cutSeq(source, atItemId);
      // The source's entries up to the cut are committed (its actor saw them): a read
      // that comes back short is read again, never forked from (consistent_read.ts).
      const entries = await consistentRead(async () => {
        const read = await ctx.journal.readPath(source.record, cut);
        const check = new PathCheck();
        check.accept(read);
        check.reaches(cut);
        return read;
      }, `thread ${threadId}`);
      return {
        replayed: undefined,
        cut,
        entries,
        sourceRecord: source.record,
        sourceVersion: source.versioned.version,
      };
    });
    if (plan.replayed !== undefined) {
      return { threadId: plan.replayed, view: (await ctx.actors.get(plan.replayed)).snapshot() };
    }
    const forkId = newId("thread");
    const now = nowIso();
    const { own, lastTurn } = settleCut(plan.entries, now, plan.cut);
    const record: ThreadRecord = {
      id: forkId,
      createdAt: now,
      updatedAt: now,
      base: { threadId, seq: plan.cut },
      forkedFrom: atItemId === undefined ? { threadId } : { threadId, itemId: atItemId },
      seq: plan.cut + own.length,
      status: "idle",
      queue: [],
    };
    Object.assign(record, inheritedTitle(plan.sourceRecord));
    if (plan.sourceRecord.tenant !== undefined) record.tenant = plan.sourceRecord.tenant;
    if (lastTurn) record.lastTurn = lastTurn;
    // Goals survive forks: the fork keeps working toward the source's objective.
    if (plan.sourceRecord.goal) record.goal = { ...plan.sourceRecord.goal };
    const set = [{ key: keys.fork(threadId, forkId), value: {} as unknown }];
    // A retry on the fork re-runs its last turn under the surface that turn was admitted with.
    const surface = lastTurn
      ? await inheritedSurface(ctx.journal, threadId, plan.entries, lastTurn.turnId)
      : undefined;
    if (surface) {
      record.surface = surface.fingerprint;
      set.push({ key: keys.surface(forkId, surface.fingerprint), value: surface.surface });
    }
    const version = await ctx.journal.commit({
      expected: null,
      record,
      entries: own,
      request: claimOf(key, { threadId: forkId }, tenantScope(plan.sourceRecord.tenant)),
      set,
      // A source deleted meanwhile (its entries may be purged) fails this; the retry sees the tombstone.
      checks: [{ key: keys.thread(threadId), version: plan.sourceVersion }],
    });
    if (version === null) throw new StaleThreadError(threadId);
    return { threadId: forkId, view: (await ctx.actors.get(forkId)).snapshot() };
  });
}

/** The journal position to cut at: the item's entry, or its turn's end when the item ends the turn. */
function cutSeq(source: ThreadActor, atItemId: string | undefined): number {
  if (atItemId === undefined) return source.lastSeq;
  const item = source.view.item(atItemId);
  const seq = source.view.seqOf(atItemId);
  if (!item || seq === undefined || item.live) {
    throw new FloretError("invalid_input", `No settled item with id: ${atItemId}`);
  }
  const endSeq = source.view.turnEndSeq(item.turnId);
  const later = source.view.items.slice(item.ordinal + 1).some((other) =>
    other.turnId === item.turnId
  );
  return endSeq !== undefined && !later ? endSeq : seq;
}

/**
 * Entries the fork writes itself: when the cut falls inside a turn, that
 * turn's open calls are settled, a compaction it was running gets its
 * `failed` record, and the turn reads `interrupted`.
 */
function settleCut(entries: Entry[], at: string, cut: number): {
  own: Entry[];
  lastTurn?: ThreadRecord["lastTurn"];
} {
  const open = new OpenCalls();
  const context = new ContextModel();
  let active: { turnId: string; runId: string } | undefined;
  let lastTurn: ThreadRecord["lastTurn"];
  for (const entry of entries) {
    open.apply(entry);
    context.apply(entry);
    if (entry.kind === "turn_started") {
      active = { turnId: entry.turnId, runId: entry.runId };
      // A compaction-only turn has nothing to retry.
      lastTurn = { turnId: entry.turnId, retryable: !entry.compaction };
    } else if (entry.kind === "turn_ended") {
      active = undefined;
      lastTurn = {
        turnId: entry.turnId,
        outcome: entry.outcome,
        retryable: entry.failure?.code !== "effect_outcome_unknown" &&
          entry.failure?.code !== "restored_turn" && lastTurn?.retryable !== false,
      };
      if (entry.failure) lastTurn.code = entry.failure.code;
    }
  }
  if (!active) return { own: [], lastTurn };
  const pending: NewEntry[] = [];
  const calls = open.list();
  const { results, unknown } = settleOpenCalls(calls);
  if (results.length > 0) {
    pending.push({ kind: "tool_results", turnId: active.turnId, runId: calls[0].runId, results });
  }
  for (const started of context.unfinished(active.turnId)) {
    pending.push(stoppedRecord(started, STOPPED.forked));
  }
  const outcome: TurnOutcome = "interrupted";
  pending.push({
    kind: "turn_ended",
    turnId: active.turnId,
    runId: active.runId,
    outcome,
    failure: { code: "interrupted", message: "The fork was cut inside this turn" },
  });
  const own = pending.map((entry, i) => ({ ...entry, seq: cut + i + 1, at }) as Entry);
  return { own, lastTurn: { turnId: active.turnId, outcome, retryable: !unknown } };
}
