/**
 * The thread record: the one small, versioned row per thread. Every commit to
 * a thread checks its version, so two processes never interleave writes.
 *
 * @module
 */
import type { TurnFailureCode } from "../errors.ts";
import type { AdmittedInput, TurnOutcome } from "./entries.ts";
import type { StoredGoal } from "../tools/goal_state.ts";

/** An input waiting for the thread to be free. */
export interface QueuedItem {
  id: string;
  requestKey: string;
  input: AdmittedInput;
  queuedAt: string;
  /** The run labels it was sent with; its turn takes them. */
  labels?: Record<string, string>;
}

/** The durable status; `stopping` exists only in memory. */
export type DurableStatus = "idle" | "running" | "waiting";

/** The persisted thread record. */
export interface ThreadRecord {
  id: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  parentThreadId?: string;
  /** The tenant the thread belongs to (set at create; forks and children inherit it). */
  tenant?: string;
  /** A child thread's agent: the id of the parent agent's `subagents` entry named at spawn. */
  agentId?: string;
  /** The source path this thread continues (forks): its entries up to `seq` come first. */
  base?: { threadId: string; seq: number };
  /** Where the fork was cut, for people. */
  forkedFrom?: { threadId: string; itemId?: string };
  /** The last entry's seq on this thread's path. */
  seq: number;
  status: DurableStatus;
  /** The admitted turn and run that own the thread right now. */
  active?: {
    turnId: string;
    runId: string;
    /** The host that runs it (see runtime/actor/ownership.ts). */
    owner?: string;
    /** Epoch ms until which the owner's claim holds without renewal. */
    leaseUntil?: number;
  };
  /** The turn that waits for interactions (status `waiting`): no run owns it until `respond`. */
  waiting?: { turnId: string; runId: string };
  queue: QueuedItem[];
  /** The latest turn and how it ended, for `retry`. */
  /**
   * The fingerprint of the surface recorded for the latest admitted turn
   * (its definitions are at `keys.surface`); absent in journals written before
   * surfaces were recorded, whose turns resume with the live agent.
   */
  surface?: string;
  lastTurn?: { turnId: string; outcome?: TurnOutcome; retryable: boolean; code?: TurnFailureCode };
  /** Tombstone: the thread is deleted; its request keys still replay. */
  deleted?: boolean;
  // Title lifecycle (see runtime/turns/titles.ts). Absent on records written before it: read as
  // "ready" when a title is set, else "none", generation 0.
  /** Where the title stands. */
  titleStatus?: "none" | "fallback" | "pending" | "ready" | "failed";
  /** Bumped by every host title and every generation claim; a late generated title with an older one is dropped. */
  titleGeneration?: number;
  /** The background title request that may install a title (status `pending`). */
  titleClaim?: { generation: number; owner: string; until: number };
  /** Inputs a restore took out of the queue, for the host to offer again (see runtime/host/restore.ts). */
  restoredInputs?: QueuedItem[];
  /** The thread's goal (see goals/goal_state.ts); forks copy it. */
  goal?: StoredGoal;
  /**
   * The update times (epoch ms) before `updatedAt`, newest first, a few only:
   * where the thread stood in the list earlier, so a list cursor keeps its
   * place while threads move (see journal/list_order.ts).
   */
  earlierUpdates?: number[];
  /** A durable graceful stop of the active turn (see runtime/commands/graceful_stop.ts). */
  stopRequest?: { turnId: string; mode: "immediate" | "graceful"; requestedAt: string };
}
