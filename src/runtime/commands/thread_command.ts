/**
 * The runner of request-keyed commands on one thread: in the thread's lock it
 * refuses a closed host and a deleted thread, answers a replayed key from the
 * journal, and otherwise runs the command, planning it again when another
 * writer got there first.
 *
 * @module
 */
import type { ThreadView } from "../../projection/view/view_types.ts";
import { type CommandKey, commandKeyNow, replayOf, withKey } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { retryStale } from "../actor/stale_retry.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";

/** A request-keyed command on one thread. */
export interface ThreadCommand<T> extends CommandKey {
  /** The answer to a replay: built from the committed result. */
  replay(result: Record<string, unknown>, actor: ThreadActor): T;
  /** The command itself, for a key seen for the first time; it must claim the key in its commit. */
  run(actor: ThreadActor): Promise<T>;
}

/**
 * Runs a command on its thread.
 *
 * @throws {FloretError} `host_closed`, `thread_not_found`, `request_conflict`,
 *   `storage_failure` (the thread kept changing), or the command's own
 */
export function threadCommand<T>(ctx: ServiceContext, command: ThreadCommand<T>): Promise<T> {
  // An actor in memory is taken as it is, without the async lookup's frame and its turn of
  // the queue.
  return ctx.actors.withActor(command.threadId, (actor) => commandOn(ctx, actor, command));
}

/** {@link threadCommand} on the thread's actor. */
function commandOn<T>(
  ctx: ServiceContext,
  actor: ThreadActor,
  command: ThreadCommand<T>,
): Promise<T> {
  return retryStale(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      const committed = await replayOf(ctx.journal, command.threadId, command);
      return committed ? command.replay(committed, actor) : await command.run(actor);
    })
  );
}

/**
 * Runs a command whose answer, the first time and on a replay, is the
 * thread's view as it is now.
 *
 * The key is taken in the caller's tick where the runtime hashes
 * synchronously (as `send` takes its own), so the command asks for the
 * thread's lock in the order it was called: `cancel()` then `send()` issued
 * without awaiting stop the turn before the send looks at the thread.
 *
 * @param command the thread and the request key
 * @param op the operation kind
 * @param input the normalised input that must match on a replay
 * @param change plans and commits the change, claiming `key`
 */
export function viewCommand(
  ctx: ServiceContext,
  command: { threadId: string; requestKey: string },
  op: string,
  input: unknown,
  change: (actor: ThreadActor, key: CommandKey) => Promise<void>,
): Promise<{ view: ThreadView }> {
  return withKey(commandKeyNow(command, op, input), (key) =>
    threadCommand(ctx, {
      ...key,
      replay(_result, actor) {
        return { view: actor.snapshot() };
      },
      async run(actor) {
        await change(actor, key);
        return { view: actor.snapshot() };
      },
    }));
}
