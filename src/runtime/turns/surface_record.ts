/**
 * Where turn surfaces are kept: one key per thread and distinct surface
 * (`["surface", threadId, fingerprint]`), written in the admission commit of
 * the first turn that has it; each turn's `turn_started` and the thread
 * record name the fingerprint. A thousand turns of one agent store one surface.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { Equip } from "../../subagents/equip.ts";
import type { FingerprintedSurface, TurnSurface } from "../../engine/run/turn_surface.ts";
import { surfaceOf } from "../../engine/run/turn_surface.ts";
import type { Entry } from "../../journal/entries.ts";
import type { Journal } from "../../journal/journal.ts";
import { keys } from "../../journal/keys.ts";
import type { KvKey } from "../../spi/kv_store.ts";
import { turnSurfaceShape } from "../../journal/stored_shapes.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";

// Surfaces this host recorded or read back, by fingerprint, per journal (so per host). A
// fingerprint names its content, so one entry serves every thread; the bound keeps a long-lived
// host from holding every surface it ever saw.
const known = new WeakMap<Journal, Map<string, FingerprintedSurface>>();
const KNOWN_LIMIT = 256;

function knownTo(journal: Journal): Map<string, FingerprintedSurface> {
  let surfaces = known.get(journal);
  if (!surfaces) known.set(journal, surfaces = new Map());
  return surfaces;
}

/**
 * The surface a run on `record` would show: the agent equipped as its run will be.
 *
 * @param agent the resolved agent
 * @param record the thread's record
 * @param equip the service's equipment (built-in tools), if any
 */
export function liveSurface(
  agent: Agent,
  record: ThreadRecord,
  equip: Equip | undefined,
): FingerprintedSurface | Promise<FingerprintedSurface> {
  return surfaceOf(equip ? equip(agent, record) : agent);
}

/**
 * The surface recorded for the thread's latest admitted turn, or `undefined`
 * when none was (a journal older than recorded surfaces, a fork's copied turn).
 *
 * @param journal where the surface is read
 * @param record the thread's record (its `surface` names the latest turn's)
 * @throws {FloretError} `storage_failure` when the store does not answer
 */
export function recordedSurface(
  journal: Journal,
  record: ThreadRecord,
): Promise<FingerprintedSurface | undefined> {
  const fingerprint = record.surface;
  if (fingerprint === undefined) return Promise.resolve(undefined);
  return storedSurface(journal, record.id, fingerprint);
}

/** A thread's stored surface by fingerprint, from memory when this process read it already. */
async function storedSurface(
  journal: Journal,
  threadId: string,
  fingerprint: string,
): Promise<FingerprintedSurface | undefined> {
  const kept = knownTo(journal).get(fingerprint);
  if (kept) return kept;
  const surface = await journal.value<TurnSurface>(
    keys.surface(threadId, fingerprint),
    turnSurfaceShape,
    "turn surface",
  );
  if (!surface) return undefined;
  const found = { fingerprint, surface };
  remember(journal, found);
  return found;
}

/**
 * Keeps a surface this process recorded or read, so a wait of its turn on this
 * host resumes without reading it back.
 *
 * @param journal the host's journal
 * @param surface the surface
 */
export function remember(journal: Journal, surface: FingerprintedSurface): void {
  const surfaces = knownTo(journal);
  if (surfaces.get(surface.fingerprint) === surface) return;
  if (surfaces.size >= KNOWN_LIMIT) surfaces.delete(surfaces.keys().next().value!);
  surfaces.set(surface.fingerprint, surface);
}

/**
 * The write an admission adds for its surface: none when the thread's latest
 * turn already had it (the common case: same agent, turn after turn).
 *
 * @param record the thread's record before the admission
 * @param surface the new turn's surface
 */
export function surfaceWrites(
  record: ThreadRecord,
  surface: FingerprintedSurface,
): { key: KvKey; value: unknown }[] | undefined {
  if (record.surface === surface.fingerprint) return undefined;
  return [{ key: keys.surface(record.id, surface.fingerprint), value: surface.surface }];
}

/**
 * The surface a fork inherits with its last turn (so a retry on the fork
 * shows what that turn was admitted with): the fingerprint on the turn's
 * `turn_started` among the copied entries, read from the source thread.
 *
 * @param journal where the source's surface is read
 * @param sourceId the thread forked from
 * @param entries the entries the fork reads, up to its cut
 * @param turnId the fork's last turn
 * @returns the surface, for the fork's own copy; `undefined` when that turn
 *   recorded none (or its record is gone)
 */
export function inheritedSurface(
  journal: Journal,
  sourceId: string,
  entries: readonly Entry[],
  turnId: string,
): Promise<FingerprintedSurface | undefined> {
  let fingerprint: string | undefined;
  for (let i = entries.length - 1; i >= 0 && fingerprint === undefined; i--) {
    const entry = entries[i];
    if (entry.kind === "turn_started" && entry.turnId === turnId) fingerprint = entry.surface;
  }
  if (fingerprint === undefined) return Promise.resolve(undefined);
  return storedSurface(journal, sourceId, fingerprint);
}
