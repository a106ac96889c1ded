/**
 * A store wrapper that breaks the k-th commit, for fault injection at every
 * commit point. Reads always pass through: the fault models a store that
 * stops accepting writes (or stops answering them), and once it clears the
 * engine must settle what it left.
 *
 * Kinds:
 * - `throw`: the commit throws and writes nothing;
 * - `not-ok`: the commit answers `{ ok: false }` (a lost version race) and writes nothing;
 * - `hang`: the commit never answers until the driver's timeout (`hangMs`), then throws;
 * - `lost-reply`: the commit lands, then throws (the reply was lost: an ambiguous outcome).
 *
 * From the k-th commit on, every commit fails the same way until `clear()`,
 * so the engine's bounded re-plans meet a real outage, not one blip.
 */
import type { KvCommit, KvCommitResult, KvStore } from "@floret/engine";

/** How the faulty commits fail. */
export type FaultKind = "throw" | "not-ok" | "hang" | "lost-reply";

/** Every fault kind. */
export const FAULT_KINDS: readonly FaultKind[] = ["throw", "not-ok", "hang", "lost-reply"];

/** A store whose commits fail from the k-th one until cleared. */
export interface FaultyStore extends KvStore {
  /** Commits attempted so far (faulty ones included). */
  readonly commits: number;
  /** Commits that failed by the fault. */
  readonly faults: number;
  /** Ends the outage: later commits pass through. */
  clear(): void;
}

/**
 * Wraps `inner`; with `failAt` 0 it only counts.
 *
 * @param inner the real store
 * @param options which commit (1-based) starts the outage, how it fails, how long a hang lasts
 */
export function faultyStore(
  inner: KvStore,
  options: { failAt: number; kind: FaultKind; hangMs?: number },
): FaultyStore {
  let commits = 0;
  let faults = 0;
  let cleared = false;
  const hangMs = options.hangMs ?? 20;
  const failing = (): boolean => !cleared && options.failAt > 0 && commits >= options.failAt;
  const storeError = (): Error => new Error(`Injected ${options.kind} at commit ${commits}`);
  return {
    get commits(): number {
      return commits;
    },
    get faults(): number {
      return faults;
    },
    clear(): void {
      cleared = true;
    },
    getMany: (keys) => inner.getMany(keys),
    list: (selector, listOptions) => inner.list(selector, listOptions),
    close: () => inner.close(),
    async commit(op: KvCommit): Promise<KvCommitResult> {
      commits++;
      if (!failing()) return inner.commit(op);
      faults++;
      switch (options.kind) {
        case "throw":
          throw storeError();
        case "not-ok":
          return { ok: false };
        case "hang":
          await new Promise((resolve) => setTimeout(resolve, hangMs));
          throw storeError();
        case "lost-reply":
          await inner.commit(op);
          throw storeError();
      }
    },
  };
}
