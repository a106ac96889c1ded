/**
 * Request-key idempotency: every mutation carries a key, scoped to its thread
 * (or to the store for `create` and `fork`). The first use commits a request
 * record with the operation, a fingerprint of its input and its result; a
 * replay returns that result; any other use of the key is a conflict.
 *
 * @module
 */
import { FloretError } from "../../errors.ts";
import { fingerprintNow, fingerprintOf } from "../../identity/fingerprint.ts";
import type { Journal, RequestRecord } from "../../journal/journal.ts";

/** A command's request key with what identifies its use: the operation and its input. */
export interface CommandKey {
  threadId: string;
  requestKey: string;
  /** The operation kind. */
  op: string;
  /** SHA-256 of the normalised input. */
  fingerprint: string;
}

/**
 * The key of a command on a thread.
 *
 * @param command the thread and the request key
 * @param op the operation kind
 * @param input the normalised input that must match on a replay
 */
export async function commandKey(
  command: { threadId: string; requestKey: string },
  op: string,
  input: unknown,
): Promise<CommandKey> {
  const fingerprint = await fingerprintOf(input);
  return { threadId: command.threadId, requestKey: command.requestKey, op, fingerprint };
}

/**
 * {@link commandKey}, without a promise where the runtime hashes synchronously:
 * the key of the commands every conversation sends, for callers that go on
 * at once instead of awaiting a value already there.
 *
 * @param command the thread and the request key
 * @param op the operation kind
 * @param input the normalised input that must match on a replay
 */
export function commandKeyNow(
  command: { threadId: string; requestKey: string },
  op: string,
  input: unknown,
): CommandKey | Promise<CommandKey> {
  const fingerprint = fingerprintNow(input);
  if (fingerprint === undefined) return commandKey(command, op, input);
  return { threadId: command.threadId, requestKey: command.requestKey, op, fingerprint };
}

/**
 * Goes on with a key from {@link commandKeyNow}: at once when it is there,
 * else when its hash is. A command that goes on at once asks for its
 * thread's lock in the tick it was called, so commands issued without
 * awaiting keep their order (`retry()` then `send()`: the retry runs and the
 * send queues behind it, not the other way round).
 *
 * @param key the key, or its promise
 * @param next the command, given its key
 * @returns what `next` returns
 */
export function withKey<T>(
  key: CommandKey | Promise<CommandKey>,
  next: (key: CommandKey) => Promise<T>,
): Promise<T> {
  return key instanceof Promise ? key.then(next) : next(key);
}

/**
 * Looks a request key up: the committed result for a replay, `null` for a new key.
 *
 * @throws {FloretError} `request_conflict` when the key was used for another operation or input
 */
export async function replayOf(
  journal: Journal,
  scope: string,
  key: Pick<CommandKey, "requestKey" | "op" | "fingerprint">,
): Promise<RequestRecord["result"] | null> {
  const record = await journal.request(scope, key.requestKey);
  if (!record) return null;
  if (record.op !== key.op) {
    throw new FloretError(
      "request_conflict",
      `Request key was already used for ${record.op}: ${key.requestKey}`,
    );
  }
  if (record.fingerprint !== key.fingerprint) {
    throw new FloretError(
      "request_conflict",
      `Request key was already used with different input: ${key.requestKey}`,
    );
  }
  return record.result;
}

/** The request record a command commits to claim its key, scoped to `scope` (default: its thread). */
export function claimOf(
  key: CommandKey,
  result: Record<string, unknown> = {},
  scope: string = key.threadId,
): { scope: string; key: string; value: RequestRecord } {
  return {
    scope,
    key: key.requestKey,
    value: { op: key.op, fingerprint: key.fingerprint, result },
  };
}
