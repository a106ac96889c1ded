/**
 * The item id scheme: ids derived from journal positions, so a live item and
 * its settled form, and every reload, share one id. Read back, an id names
 * the entry that made its item, so a cursor can be found without projecting
 * the path up to it.
 *
 * @module
 */
import type { Entry } from "../../journal/entries.ts";

/** Builds item ids. */
export const itemIds = {
  user: (turnId: string): string => `${turnId}:user`,
  thinking: (runId: string, step: number): string => `${runId}:${step}:thinking`,
  assistant: (runId: string, step: number): string => `${runId}:${step}:assistant`,
  tool: (runId: string, step: number, callId: string): string => `${runId}:${step}:tool:${callId}`,
  interaction: (interactionId: string): string => `${interactionId}:item`,
  steer: (steerId: string): string => `${steerId}:user`,
};

/**
 * Which entry made an item: a user item comes from its turn's start (or a
 * steer), thinking, assistant and tool items from one step of a run, an
 * interaction item from the interaction's opening. `id` is the engine id
 * the item id starts with (it carries the time it was made).
 */
export type ItemOrigin =
  | { kind: "user"; id: string }
  | { kind: "step"; id: string; step: number }
  | { kind: "interaction"; id: string };

/** Reads an item id back; `undefined` when it cannot be one. */
export function itemOrigin(itemId: string): ItemOrigin | undefined {
  const parts = itemId.split(":");
  if (parts.length === 2 && parts[1] === "user") return { kind: "user", id: parts[0] };
  if (parts.length === 2 && parts[1] === "item") return { kind: "interaction", id: parts[0] };
  // Tool ids end with the provider's call id, which may itself hold colons.
  const kind = parts[2];
  const known = (parts.length === 3 && (kind === "thinking" || kind === "assistant")) ||
    (parts.length >= 4 && kind === "tool");
  if (!known || !/^\d+$/.test(parts[1])) return undefined;
  return { kind: "step", id: parts[0], step: Number(parts[1]) };
}

/** Whether `entry` is the one that made the items of `origin`. */
export function madeBy(origin: ItemOrigin, entry: Entry): boolean {
  switch (origin.kind) {
    case "user":
      return (entry.kind === "turn_started" && entry.turnId === origin.id && !!entry.input) ||
        (entry.kind === "steer" && entry.steerId === origin.id);
    case "step":
      return entry.kind === "step" && entry.runId === origin.id && entry.step === origin.step;
    case "interaction":
      return entry.kind === "interaction_opened" && entry.interactionId === origin.id;
  }
}
