/**
 * Finding the child of a spawn that a crash or a cancel cut off. Such a
 * call settles `cancelled` although its child may exist; when the model
 * then calls `spawn_agent` again with the same arguments (under a new call
 * id, as a real model does), the new call adopts that child instead of
 * starting a second one. A child is adopted at most once: each spawn key
 * that names it counts as one claim.
 *
 * @module
 */
import { decodeValue } from "../journal/codec.ts";
import type { RequestRecord } from "../journal/journal.ts";
import { keys } from "../journal/keys.ts";
import { requestRecordShape } from "../journal/stored_shapes.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import type { SpawnRequest } from "./spawn.ts";

/**
 * The id of a child started by a cut-off `spawn_agent` call of `parentThreadId`
 * with the same arguments, that no other call claims yet.
 *
 * @param ctx the service
 * @param parentThreadId the parent
 * @param scope where the parent's spawn keys live
 * @param request the new call's arguments
 * @returns the child to adopt, if any
 */
export async function orphanedChild(
  ctx: ServiceContext,
  parentThreadId: string,
  scope: string,
  request: SpawnRequest,
): Promise<string | undefined> {
  const view = (await ctx.actors.get(parentThreadId)).snapshot();
  const cutOff = new Set<string>();
  for (const item of view.items) {
    const tool = item.tool;
    if (tool?.name !== "spawn_agent" || tool.status !== "cancelled") continue;
    if (sameRequest(tool.arguments, request)) cutOff.add(tool.callId);
  }
  if (cutOff.size === 0) return undefined;
  const claims = new Map<string, string[]>();
  const rows = await ctx.journal.store.list({ prefix: keys.request(scope, "").slice(0, 2) });
  for (const row of rows) {
    const threadId =
      decodeValue<RequestRecord>(row.value, requestRecordShape, "request record").result.threadId;
    if (typeof threadId !== "string") continue;
    claims.set(threadId, [...(claims.get(threadId) ?? []), row.key[2] as string]);
  }
  for (const [threadId, keysOfChild] of claims) {
    if (keysOfChild.length === 1 && cutOff.has(keysOfChild[0])) return threadId;
  }
  return undefined;
}

function sameRequest(raw: string, request: SpawnRequest): boolean {
  try {
    const earlier = JSON.parse(raw) as Partial<SpawnRequest>;
    return earlier.agent === request.agent && earlier.task === request.task &&
      (earlier.title ?? null) === (request.title ?? null);
  } catch {
    return false;
  }
}
