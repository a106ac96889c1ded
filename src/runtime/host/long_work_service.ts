/**
 * The long-work commands of the in-process service (DESIGN §11): goals,
 * queue steering and the children's facts. `createThreadService` adds them
 * to the service it builds.
 *
 * @module
 */
import type { ParentEvent } from "../../subagents/parent_event_list.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";

/** The long-work methods of `host.threads()` (and of `threadClient`). */
export interface ThreadServiceWave3 {
  /** Sets the goal (a new version, active) without starting work; the next request sees it. */
  setGoal(
    input: { threadId: string; requestKey: string; text: string },
  ): Promise<{ view: ThreadView }>;
  /** Removes the goal without starting or stopping work. */
  deleteGoal(input: { threadId: string; requestKey: string }): Promise<{ view: ThreadView }>;
  /** Sets the goal; on an idle thread also admits `text` as a user turn in the same commit. */
  submitGoal(
    input: { threadId: string; requestKey: string; text: string },
  ): Promise<{ view: ThreadView; turnId?: string }>;
  /** Turns a queued input into a steer of the turn under way, in one commit. */
  steerQueued(input: {
    threadId: string;
    requestKey: string;
    queueId: string;
    expectedText: string;
  }): Promise<{ view: ThreadView }>;
  /** The facts of the thread's children, oldest first, in pages. */
  listParentEvents(
    threadId: string,
    options?: { limit?: number; cursor?: string },
  ): Promise<{ events: ParentEvent[]; cursor?: string }>;
}
