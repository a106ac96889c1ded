/**
 * Which host runs a thread's active turn. Several hosts may share one store
 * (say, web servers on one Turso database): the host that admits a turn owns
 * it and keeps a lease on it while its run lives. Another host never settles
 * a turn whose lease is live; the same `hostId` after a restart, or anyone
 * after the lease lapsed, settles it as abandoned.
 *
 * @module
 */
import type { ThreadRecord } from "../journal/thread_record.ts";

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

/**
 * Whether this host may settle the record's active turn as abandoned, given
 * that no run of it exists in this process.
 */
export function canSettleAbandoned(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): boolean {
  const active = record.active;
  if (!active) return false;
  if (active.owner === undefined || active.owner === ownership.hostId) return true;
  return (active.leaseUntil ?? 0) < now;
}

/**
 * Stamps a record about to be committed by this host: a turn this host admits
 * (no owner yet) or already owns gets this host as owner and a fresh lease;
 * another host's turn is left as it is.
 */
export function stampLease(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): ThreadRecord {
  const active = record.active;
  if (!active || (active.owner !== undefined && active.owner !== ownership.hostId)) return record;
  return {
    ...record,
    active: { ...active, owner: ownership.hostId, leaseUntil: now + ownership.leaseTtlMs },
  };
}

/** Whether this host's lease on the record is past a third of its life (time to renew). */
export function leaseNeedsRenewal(
  record: ThreadRecord,
  ownership: Ownership,
  now = Date.now(),
): boolean {
  const active = record.active;
  if (!active || active.owner !== ownership.hostId) return false;
  return (active.leaseUntil ?? 0) - now < (ownership.leaseTtlMs * 2) / 3;
}
