/**
 * Child facts for a parent with `parentEvents`: each child's ended turns
 * (completed, failed, cancelled) and pending interactions (needs input,
 * needs approval), read from the children's own journals. At each provider
 * boundary the parent's run admits the facts its path has not admitted yet,
 * oldest first, as one user-role message each; nothing here starts a turn.
 *
 * @module
 */
import { nowIso } from "../journal/now_iso.ts";
import type { ChildEvent } from "../journal/entries.ts";
import { keys } from "../journal/keys.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import type { ThreadView } from "../projection/view/view_types.ts";
import { childReport } from "./child_status.ts";
import { boundUtf8, MAX_PREVIEW_BYTES } from "./bounds.ts";

/** Children remembered as having nothing new, per service, before the memo starts again. */
const MAX_QUIET = 10_000;

/** Finds the child facts a parent has not admitted yet. */
export type CollectChildEvents = (
  parentThreadId: string,
  admitted: ReadonlySet<string>,
) => Promise<ChildEvent[]>;

/**
 * The collector of one ThreadService.
 *
 * @param ctx the service
 * @returns a function the run host calls before each provider request
 */
export function childEventCollector(ctx: ServiceContext): CollectChildEvents {
  // Children whose record has not changed since they last had nothing new to
  // tell are skipped: every fact (a turn's end, a new interaction) rewrites
  // the child's record. Keyed by parent and child; memory only.
  const quiet = new Map<string, string>();
  return async (parentThreadId, admitted) => {
    const childIds = await ctx.journal.indexed(keys.childrenOf(parentThreadId));
    const records = await ctx.journal.threads(childIds);
    const found: ChildFact[] = [];
    for (const record of records) {
      if (!record || record.deleted) continue; // deleted meanwhile: nothing to tell
      const memo = `${parentThreadId}/${record.id}`;
      const signature = `${record.updatedAt}|${record.status}|${record.lastTurn?.turnId}`;
      if (quiet.get(memo) === signature) continue;
      let view: ThreadView;
      try {
        view = (await ctx.actors.fresh(record.id)).snapshot();
      } catch {
        continue;
      }
      const fresh = factsOf(view).filter((fact) => !admitted.has(fact.event.key));
      // A bound on memory only: forgetting means reading a child's view once more.
      if (quiet.size >= MAX_QUIET) quiet.clear();
      if (fresh.length === 0) quiet.set(memo, signature);
      else quiet.delete(memo);
      found.push(...fresh);
    }
    // Oldest first; facts of one instant keep a stable order by key.
    found.sort(byAge);
    return found.map((fact) => fact.event);
  };
}

/** Longest admitted message of one child fact, in bytes of UTF-8. */
export const MAX_EVENT_MESSAGE_BYTES = 8192;

/** One child fact: when it happened, the event the parent admits, and its public form. */
export interface ChildFact {
  at: string;
  event: ChildEvent;
  /** The report preview (≤ 512 bytes), for completed facts. */
  preview?: string;
  /** A failure's code, never its raw text. */
  code?: string;
}

/**
 * The facts of one child, from its view: each ended turn and each pending
 * interaction. The message the parent's model reads is bounded: a failure by
 * its code, a report by its 512-byte preview (the model reads the rest with
 * `wait_agents` or `inspect_agent`), the whole within 8 KiB.
 */
export function factsOf(view: ThreadView): ChildFact[] {
  const childThreadId = view.threadId;
  const facts: ChildFact[] = [];
  const latest = view.turns.at(-1);
  for (const turn of view.turns) {
    if (!turn.outcome || !turn.endedAt) continue;
    const fact = turn.outcome === "completed"
      ? "completed"
      : turn.outcome === "cancelled"
      ? "cancelled"
      : "failed";
    const found: ChildFact = {
      at: turn.endedAt,
      event: { key: `${childThreadId}/${turn.turnId}/${fact}`, childThreadId, fact, text: "" },
    };
    let text = `[sub-agent ${childThreadId}] ${fact}`;
    if (turn.failure) {
      found.code = turn.failure.code;
      text += ` (${turn.failure.code})`;
    }
    // Only the latest turn's report is the child's report now.
    const report = turn === latest && view.status === "idle" ? childReport(view) : undefined;
    const preview = report === undefined ? undefined : boundUtf8(report, MAX_PREVIEW_BYTES);
    if (preview !== undefined) {
      found.preview = preview;
      text += `\nReport:\n${preview}`;
      // The rest stays with the child: the model asks for it when it needs it.
      if (preview !== report) text += "\n(Read the full report with wait_agents or inspect_agent.)";
    }
    found.event.text = boundUtf8(text, MAX_EVENT_MESSAGE_BYTES);
    facts.push(found);
  }
  for (const interaction of view.pending) {
    const fact = interaction.kind === "approval" ? "needs_approval" : "needs_input";
    const what = interaction.kind === "approval"
      ? `approval of a ${interaction.toolName ?? "tool"} call`
      : `answers: ${(interaction.questions ?? []).map((q) => q.prompt).join(" / ")}`;
    facts.push({
      // When it opened, so a question asked before another child finished comes first.
      at: interaction.createdAt ?? nowIso(),
      event: {
        key: `${childThreadId}/${interaction.id}/${fact}`,
        childThreadId,
        fact,
        text: boundUtf8(
          `[sub-agent ${childThreadId}] ${fact}: it waits for ${what}`,
          MAX_EVENT_MESSAGE_BYTES,
        ),
      },
    });
  }
  return facts;
}

/** Oldest first; facts of one instant keep a stable order by key. */
export function byAge(a: ChildFact, b: ChildFact): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.event.key < b.event.key ? -1 : 1;
}
