/**
 * The storage toolkit: everything needed to put Floret on a new database, the
 * same building blocks our own memory, libSQL and Deno KV stores use.
 *
 * A store implements {@link KvStore}: an ordered map from key tuples to
 * opaque bytes, where every entry carries a version and every write is one
 * atomic, checked {@link KvStore.commit}. The engine owns all encoding; a
 * store never interprets a value. The helpers here turn the SPI's tuple world
 * into plain bytes, so a backend only has to keep byte strings in `memcmp`
 * order:
 *
 * - {@link encodeKey} / {@link decodeKey}: key tuples to order-preserving
 *   bytes and back (store the bytes; byte order is tuple order).
 * - {@link planScan}: a `list` selector and its options as one half-open byte
 *   range `[lower, upper)` with direction and limit.
 * - {@link planCommit} / {@link planGet}: validate a commit or read up front
 *   (bad input fails with `invalid_input` before any I/O), encode its keys and
 *   copy its values.
 * - {@link formatVersion}: fixed-width versions from a counter, for backends
 *   without native versionstamps.
 * - {@link optionalPeer}: import your database's npm package on first use, so
 *   a host without it gets an error that says what to install.
 *
 * Errors: throw {@link FloretError} with code `storage_failure` for I/O
 * problems (keep the original error as `cause`), and return `{ ok: false }`
 * — never throw — when a check fails. Check your store with `kvConformance`
 * from `@floret/engine/testing`.
 *
 * @example
 * ```ts
 * import { decodeKey, encodeKey, planScan } from "@floret/engine/spi";
 *
 * const bytes = encodeKey(["thread", "t1", 7]);
 * decodeKey(bytes); // ["thread", "t1", 7]
 * const scan = planScan({ prefix: ["thread", "t1"] }, { limit: 10 });
 * // scan every stored key k with scan.lower <= k < scan.upper, at most 10
 * ```
 *
 * @module
 */
export { FloretError, isFloretError } from "../src/errors.ts";
export type { ErrorCode } from "../src/errors.ts";
export type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvKeyPart,
  KvListOptions,
  KvSelector,
  KvStore,
} from "../src/spi/kv_store.ts";
export { decodeKey, encodeKey } from "../src/spi/key_codec.ts";
export { compareBytes, inScan, planScan } from "../src/spi/kv_range.ts";
export type { KvScan } from "../src/spi/kv_range.ts";
export {
  bytesToMapKey,
  formatVersion,
  planCommit,
  planGet,
  VERSION_WIDTH,
} from "../src/spi/kv_commit_plan.ts";
export type { CommitPlan, PlannedCheck, PlannedWrite } from "../src/spi/kv_commit_plan.ts";
export { PLANNED_COMMIT } from "../src/spi/kv_planned_commit.ts";
export type {
  DeferredJson,
  OwnedCheck,
  OwnedPlan,
  OwnedWrite,
  PlannedCommit,
  PlannedCommitOffer,
  PlannedCommitStore,
} from "../src/spi/kv_planned_commit.ts";
export { optionalPeer } from "../src/optional_peer.ts";
export type { OptionalPeer } from "../src/optional_peer.ts";
