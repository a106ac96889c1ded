/**
 * Which host runs a thread's active turn. Several hosts may share one store
 * (say, web servers on one Turso database): the host that admits a turn owns
 * it and keeps a lease on it while its run lives. Another host never settles
 * a turn whose lease is live; the same `hostId` after a restart, or anyone
 * after the lease lapsed, settles it as abandoned.
 *
 * @module
 */
import type { ThreadRecord } from "../../journal/thread_record.ts";

/** This host's identity and lease length. */
export interface Ownership {
  /** Stable per host slot; a restart with the same id takes back its own turns at once. */
  readonly hostId: string;
  /** How long a lease lasts without renewal. */
  readonly leaseTtlMs: number;
}

/** The default host id (single-host deployments need nothing else). */
export const DEFAULT_HOST_ID = "default";
/** The default lease: renewed on every commit and every third of this while a run lives. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** The active turn of `record` when this host may write for it: unowned (just admitted) or its own. */
function ownActive(record: ThreadRecord, ownership: Ownership): ThreadRecord["active"] {
  const active = record.active;
  return active?.owner === undefined || active.owner === ownership.hostId ? active : undefined;
}

/**
 * Whether this host may settle the record's active turn as abandoned, given
 * that no run of it exists in this process: it is this host's, or its lease lapsed.
 */
export function canSettleAbandoned(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): boolean {
  if (!record.active) return false;
  return ownActive(record, ownership) !== undefined || (record.active.leaseUntil ?? 0) < now;
}

/**
 * Stamps a record about to be committed by this host, in place: a turn this
 * host admits (no owner yet) or already owns gets this host as owner and a
 * fresh lease; another host's turn is left as it is. The caller owns `record`
 * (a copy made for the commit), so no second copy of it is made.
 *
 * @returns `record`
 */
export function stampLease(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): ThreadRecord {
  const active = ownActive(record, ownership);
  if (!active) return record;
  const leaseUntil = now + ownership.leaseTtlMs;
  // `active` is replaced, not changed: the record it came from may share it. A spread alone,
  // then the two fields (the keys and order of `{ ...active, owner, leaseUntil }`): a spread
  // followed by fields in one literal copies through the runtime, a lone spread clones.
  const stamped = { ...active };
  stamped.owner = ownership.hostId;
  stamped.leaseUntil = leaseUntil;
  record.active = stamped;
  return record;
}

/** Whether this host's lease on the record is past a third of its life (time to renew). */
export function leaseNeedsRenewal(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): boolean {
  const owned = record.active?.owner === ownership.hostId;
  return owned && (record.active?.leaseUntil ?? 0) - now < (ownership.leaseTtlMs * 2) / 3;
}
