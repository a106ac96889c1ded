/**
 * `listParentEvents`: the facts of a thread's children (completed, failed,
 * cancelled, needs input, needs approval), oldest first, in pages. Each fact
 * is bounded like the message its parent's model reads: a preview of at
 * most 512 bytes and a failure's code, never its raw text.
 *
 * @module
 */
import { FloretError } from "../errors.ts";
import { keys } from "../journal/keys.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import { byAge, type ChildFact, factsOf } from "./parent_events.ts";

/** One child fact as hosts read it. */
export interface ParentEvent {
  /** The child thread the fact is about. */
  childThreadId: string;
  /** What happened to the child (its turn ended, or it waits on its parent). */
  kind: "completed" | "failed" | "cancelled" | "needs_input" | "needs_approval";
  /** ≤ 512 bytes of UTF-8. */
  preview?: string;
  /** A failure's code, never its raw text. */
  code?: string;
  /** When it happened (ISO time). */
  at: string;
}

/** Events per page unless `limit` says otherwise. */
export const DEFAULT_PARENT_EVENTS_LIMIT = 50;

const CURSOR_PREFIX = "pe1.";

/**
 * A page of the child facts of `threadId`, oldest first.
 *
 * @throws {FloretError} `thread_not_found`; `invalid_input` for a cursor this API did not make
 */
export async function listParentEvents(
  ctx: ServiceContext,
  threadId: string,
  options: { limit?: number; cursor?: string } = {},
): Promise<{ events: ParentEvent[]; cursor?: string }> {
  const from = offsetOf(options.cursor);
  const limit = options.limit ?? DEFAULT_PARENT_EVENTS_LIMIT;
  await ctx.actors.fresh(threadId); // thread_not_found for a thread that is not there
  const childIds = await ctx.journal.indexed(keys.childrenOf(threadId));
  const facts: ChildFact[] = [];
  for (const childId of childIds) {
    try {
      facts.push(...factsOf((await ctx.actors.fresh(childId)).snapshot()));
    } catch (error) {
      // A child deleted meanwhile has nothing to tell.
      if (error instanceof FloretError && error.code === "thread_not_found") continue;
      throw error;
    }
  }
  facts.sort(byAge);
  const page = facts.slice(from, from + limit).map(publicEvent);
  const next = from + page.length;
  return next < facts.length
    ? { events: page, cursor: `${CURSOR_PREFIX}${next}` }
    : { events: page };
}

function publicEvent(fact: ChildFact): ParentEvent {
  const event: ParentEvent = {
    childThreadId: fact.event.childThreadId,
    kind: fact.event.fact,
    at: fact.at,
  };
  if (fact.preview !== undefined) event.preview = fact.preview;
  if (fact.code !== undefined) event.code = fact.code;
  return event;
}

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const offset = cursor.startsWith(CURSOR_PREFIX)
    ? Number(cursor.slice(CURSOR_PREFIX.length))
    : NaN;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new FloretError("invalid_input", "Not a cursor of listParentEvents");
  }
  return offset;
}
