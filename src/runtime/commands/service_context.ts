/**
 * What every command and query of one ThreadService shares: the journal, the
 * actors, what runs need, and whether the host is still open.
 *
 * @module
 */
import type { Journal } from "../../journal/journal.ts";
import type { ActorCache } from "../turns/actor_cache.ts";
import type { ExecutionGate } from "./execution_gate.ts";
import type { RunDeps } from "../turns/run_host.ts";

/** Shared state of one ThreadService. */
export interface ServiceContext {
  journal: Journal;
  actors: ActorCache;
  /** What runs need: observation, agent resolution, lease keeping. */
  runs: RunDeps;
  /** @throws {FloretError} `host_closed` after shutdown */
  assertOpen(): void;
  /** Whether commands may start execution yet (`deferExecution`). */
  gate: ExecutionGate;
}
