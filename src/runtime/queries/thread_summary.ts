/**
 * A thread's row in `list`: the record's public fields and the status the
 * host sees.
 *
 * @module
 */
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { titleStateOf } from "../../projection/view/title_state.ts";
import type { ThreadStatus, ThreadSummary } from "../../projection/view/view_types.ts";

/** A thread's summary for `list`, with the status the host sees. */
export function summarize(record: ThreadRecord, status: ThreadStatus): ThreadSummary {
  const summary: ThreadSummary = {
    threadId: record.id,
    ...titleStateOf(record),
    status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
  if (record.parentThreadId) summary.parentThreadId = record.parentThreadId;
  if (record.tenant !== undefined) summary.tenant = record.tenant;
  return summary;
}
