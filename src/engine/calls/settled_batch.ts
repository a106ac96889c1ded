/**
 * Waiting for a tool batch, bounded by the run's tool signal.
 *
 * @module
 */
import { untilRunAborted } from "../../tools/until_aborted.ts";
import type { RunHost } from "../run/run_loop.ts";
import type { BatchResult } from "./tool_runner.ts";

/**
 * The batch once settled. A handler may ignore its signal: once the tools are
 * told to stop (immediate cancel, shutdown, delete), the run stops waiting for
 * them and whatever they return later is dropped. A batch that settled as it
 * ran (every handler answered synchronously) has nothing in flight to track or
 * bound, but a stop that came meanwhile still ends the run.
 *
 * @param host the thread's side of the run
 * @param batch what `runBatch` returned
 * @returns the settled batch, or the same batch once settled
 * @throws the tool signal's reason once the tools were told to stop
 */
export function settledBatch(
  host: RunHost,
  batch: BatchResult | Promise<BatchResult>,
): BatchResult | Promise<BatchResult> {
  if (batch instanceof Promise) {
    host.batchStarted(batch);
    return untilRunAborted(batch, host.toolSignal);
  }
  // Only a stop aborts the tool signal (and it sets stopRequested() first): a
  // run nobody stopped does not make the signal to ask.
  if (host.stopRequested()) host.toolSignal.throwIfAborted();
  return batch;
}
