/**
 * The engine types every store entry takes and returns (the same types as
 * `@floret/engine/spi`), re-exported by each entry so that its documentation
 * is complete on its own.
 *
 * @module
 */
export type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvKeyPart,
  KvListOptions,
  KvSelector,
  KvStore,
} from "@floret/engine/spi";
