/**
 * An optional fast path between the journal and a store whose commit never
 * waits (our memory store): the journal hands over an already planned commit
 * (keys encoded once, values it will never touch again), so the store neither
 * re-validates the tuples nor copies the values defensively, and the commit
 * settles synchronously. {@link KvStore} itself is unchanged; a store that does
 * not offer the path gets the ordinary `commit` call. Exported from
 * `@floret/engine/spi` for such stores; others should ignore it.
 *
 * @module
 */

import type { CommitPlan, PlannedCheck } from "./kv_commit_plan.ts";
import type { KvCommitResult, KvKey, KvStore } from "./kv_store.ts";

/**
 * One write of an {@link OwnedPlan}: as a {@link CommitPlan}'s, except that
 * the value may be text, which stands for its UTF-8 bytes (what `TextEncoder`
 * makes of it), or JSON whose text is made on demand. The journal's values
 * are JSON: a store that keeps the text (or the deferred value) encodes it
 * only when it is read, and holds one string per value instead of a buffer.
 */
export interface OwnedWrite {
  /** Encoded key. */
  key: Uint8Array;
  /**
   * `bytesToMapKey(key)`, when the planner already has it (a thread's record
   * and entry keys, from its cached prefixes): a store that keys a map by
   * that string then skips converting the bytes. Absent means "derive it".
   */
  id?: string;
  /**
   * The value's bytes, or text standing for its UTF-8 bytes, or a
   * {@link DeferredJson} standing for the UTF-8 bytes of its text, or null to delete.
   */
  value: Uint8Array | string | DeferredJson | null;
}

/**
 * A JSON value whose text is made only when first asked for: the journal's
 * entries, which are never changed once committed. A store that keeps values
 * in memory may keep it as it is and ask for the text when the value is read
 * (most entries of a memory store never are); any other store asks at once.
 */
export interface DeferredJson {
  /** The value's JSON text, the same on every call. */
  json(): string;
}

/** One check of an {@link OwnedPlan}: a {@link PlannedCheck}, with its key's id when known. */
export interface OwnedCheck extends PlannedCheck {
  /** `bytesToMapKey(key)` when the planner has it (see {@link OwnedWrite.id}). */
  id?: string;
}

/** A {@link CommitPlan} whose values may be text (see {@link OwnedWrite}). */
export interface OwnedPlan {
  /** Checks, in the caller's order. */
  checks: OwnedCheck[];
  /** Sets first, then deletes; every key appears at most once. */
  writes: OwnedWrite[];
}

/**
 * Property under which a store offers {@link PlannedCommit}. A unique symbol
 * (not `Symbol.for`), so no store claims the path by accident.
 */
export const PLANNED_COMMIT: unique symbol = Symbol("floret.plannedCommit");

/**
 * Commits a plan exactly as `commit` would commit the operation it was planned
 * from, but synchronously: it returns the result, or throws what `commit`
 * would reject with. Only a store whose commit never waits (the memory store)
 * offers it. The plan's checks and writes satisfy the {@link CommitPlan}
 * contract (valid encoded keys, each written at most once); its value buffers
 * now belong to the store, and a text value is stored as its UTF-8 bytes.
 */
export type PlannedCommit = (plan: OwnedPlan | CommitPlan) => KvCommitResult;

/**
 * What a store offers under {@link PLANNED_COMMIT}: the path, and the `commit`
 * it stands for. The path is used only while the store's `commit` is still that
 * function, so a wrapper that replaces `commit` (say `{ ...store, commit }`,
 * which copies the symbol too) is never bypassed.
 */
export interface PlannedCommitOffer {
  /** The store's own `commit`, which the path is equivalent to. */
  commit: KvStore["commit"];
  /** See {@link PlannedCommit}. */
  planned: PlannedCommit;
  /** The store's own `getMany`, which `version` answers like (optional). */
  getMany?: KvStore["getMany"];
  /**
   * The version of one key, `null` when it is missing: what
   * `(await getMany([key]))[0]?.version ?? null` gives, synchronously, without
   * building the entry (no key decoded, no value copied); throws what
   * `getMany` would reject with. Used only while the store's `getMany` is
   * still the offer's.
   */
  version?: (key: KvKey) => string | null;
}

/** A store that offers the planned-commit path. */
export interface PlannedCommitStore extends KvStore {
  /** See {@link PlannedCommitOffer}. */
  [PLANNED_COMMIT]: PlannedCommitOffer;
}

/**
 * The store's planned-commit path, bound to it, or undefined when it offers none.
 *
 * @param store any store
 * @returns the path, or undefined when the store offers none or its `commit` was replaced
 */
export function plannedCommitOf(store: KvStore): PlannedCommit | undefined {
  const offer = (store as Partial<PlannedCommitStore>)[PLANNED_COMMIT];
  if (!offer || typeof offer.planned !== "function") return undefined;
  return store.commit === offer.commit ? offer.planned : undefined;
}

/**
 * The store's synchronous version read, bound to it, or undefined when it
 * offers none or its `getMany` was replaced (a wrapper is never bypassed).
 *
 * @param store any store
 * @returns the read, or undefined
 */
export function plannedVersionOf(store: KvStore): ((key: KvKey) => string | null) | undefined {
  const offer = (store as Partial<PlannedCommitStore>)[PLANNED_COMMIT];
  if (!offer || typeof offer.version !== "function") return undefined;
  return store.getMany === offer.getMany ? offer.version : undefined;
}
