/**
 * `turn.ended` for turns that a command ends rather than their run: `cancel`
 * and `delete` commit the turn's end and stop its run, which therefore never
 * reaches its own end (where a run tells observers). Without this a cancelled
 * or deleted turn had a `turn.started` and never a `turn.ended`, and logs and
 * metrics kept it open.
 *
 * @module
 */
import type { NewEntry } from "../../journal/entries.ts";
import { nowIso } from "../../journal/now_iso.ts";
import type { ObservationEvent } from "../../observation/events.ts";
import type { HistoryReader } from "../../projection/history/history_model.ts";

/**
 * Emits `turn.ended` for each turn end among committed entries, with the
 * fields a run's own `turn.ended` carries.
 *
 * @param observe the host's observer
 * @param threadId the thread the entries were committed to
 * @param entries what was committed
 * @param history where the turn's run labels are read (they go with its events)
 */
export function observeEnded(
  observe: (event: ObservationEvent) => void,
  threadId: string,
  entries: readonly NewEntry[] | undefined,
  history?: Pick<HistoryReader, "labelsOf">,
): void {
  for (const entry of entries ?? []) {
    if (entry.kind !== "turn_ended") continue;
    const event: ObservationEvent = {
      type: "turn.ended",
      threadId,
      turnId: entry.turnId,
      at: nowIso(),
      outcome: entry.outcome,
      failureCode: entry.failure?.code,
    };
    if (entry.runId !== undefined) event.runId = entry.runId;
    const labels = history?.labelsOf(entry.turnId);
    if (labels !== undefined && Object.keys(labels).length > 0) event.labels = labels;
    observe(event);
  }
}
