/**
 * The engine's keyspace over the KvStore (private: adapters never decode it).
 *
 * @module
 */
import type { KvKey } from "../spi/kv_store.ts";

/** The store schema version this engine writes. */
export const STORE_SCHEMA_VERSION = 1;

/** Store-wide request keys (create, fork) use this scope. */
export const STORE_SCOPE = "";

/**
 * The scope of store-wide request keys (create, fork) of a tenant's threads:
 * the same key from two tenants is two requests. Thread ids start with
 * `thread_`, so no tenant scope is ever a thread's scope.
 *
 * @param tenant the tenant, or `undefined` for threads of no tenant
 */
export function tenantScope(tenant: string | undefined): string {
  return tenant === undefined ? STORE_SCOPE : `tenant:${tenant}`;
}

/** Key builders. */
export const keys = {
  schema: (): KvKey => ["meta", "schema"],
  thread: (threadId: string): KvKey => ["thread", threadId],
  entry: (threadId: string, seq: number): KvKey => ["entry", threadId, seq],
  entries: (threadId: string): KvKey => ["entry", threadId],
  request: (scope: string, requestKey: string): KvKey => ["req", scope, requestKey],
  active: (threadId: string): KvKey => ["active", threadId],
  activeAll: (): KvKey => ["active"],
  updated: (updatedAtMs: number, threadId: string): KvKey => ["updated", updatedAtMs, threadId],
  updatedAll: (): KvKey => ["updated"],
  fork: (sourceId: string, forkId: string): KvKey => ["fork", sourceId, forkId],
  forksOf: (sourceId: string): KvKey => ["fork", sourceId],
  child: (parentId: string, childId: string): KvKey => ["child", parentId, childId],
  childrenOf: (parentId: string): KvKey => ["child", parentId],
  artifact: (threadId: string, artifactId: string): KvKey => ["artifact", threadId, artifactId],
  artifactsOf: (threadId: string): KvKey => ["artifact", threadId],
  /** A turn surface of a thread, by fingerprint: written once per distinct surface. */
  surface: (threadId: string, fingerprint: string): KvKey => ["surface", threadId, fingerprint],
  surfacesOf: (threadId: string): KvKey => ["surface", threadId],
  /** Marks a thread whose title request may still be in flight (settled at startup). */
  titlePending: (threadId: string): KvKey => ["title_pending", threadId],
  titlePendingAll: (): KvKey => ["title_pending"],
  threadAll: (): KvKey => ["thread"],
};
