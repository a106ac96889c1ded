/**
 * Tracks the tool calls of the active turn that have no result yet, so a
 * cancel, a restart or a fork can settle each one honestly: a call that may
 * have had its side effect is `unknown`, any other is `cancelled`.
 *
 * @module
 */
import type { Entry, ToolOutcome } from "../journal/entries.ts";

/** A call that still needs a result. */
export interface OpenCall {
  callId: string;
  name: string;
  runId: string;
  /** A dispatch marker was committed: its side effect may have happened. */
  dispatched: boolean;
  /** It started running (dispatched, or a safe call marked started after its approval). */
  started: boolean;
  /** The step that made it (resumed runs settle its batch). */
  step: number;
  /** The raw arguments, parsed again when an approved call runs in a later run. */
  arguments: string;
  /**
   * An allowed `none`/`read` call: it started right after its step was
   * committed, without a marker, so it may have run (a spawn's child exists).
   */
  mayHaveRun?: boolean;
}

/**
 * A `none`/`read` call cut off by a crash (its turn ended `interrupted`) whose
 * result the model has not yet gone past: a resumed retry runs it again.
 */
export interface InterruptedCall extends OpenCall {
  /** The turn whose step made the call. */
  turnId: string;
}

/** What readers of the open calls may use. */
export type OpenCallsReader = Pick<OpenCalls, "list" | "interrupted">;

/** Open calls of the current turn, kept up to date entry by entry. */
export class OpenCalls {
  // In call order; made at a turn's first call and dropped when the last one
  // has its result or the turn starts or ends. A turn has a handful of open
  // calls at most: scanning a short list costs less than a Map, which every
  // tool step would otherwise fill and shrink again (a fresh table each time).
  #calls: OpenCall[] | undefined;
  // Safe calls of the current turn settled `cancelled` while they may have run:
  // they become interrupted calls if the turn ends `interrupted` (a crash).
  #cutOff: InterruptedCall[] | undefined;
  // Interrupted calls since the model's last step (see `interrupted`).
  #interrupted: InterruptedCall[] | undefined;

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    switch (entry.kind) {
      case "turn_started":
        this.#calls = this.#cutOff = undefined;
        // Only a resumed retry takes up the interrupted calls; any other turn moves on.
        if (entry.retryOf?.mode !== "resume") this.#interrupted = undefined;
        return;
      case "turn_ended":
        if (
          this.#cutOff && entry.outcome === "interrupted" && entry.failure?.code === "interrupted"
        ) {
          this.#interrupted = [...(this.#interrupted ?? []), ...this.#cutOff];
        }
        this.#calls = this.#cutOff = undefined;
        return;
      case "step": {
        // The model answered after them: interrupted calls are behind it now.
        if (!entry.partial) this.#interrupted = this.#cutOff = undefined;
        // A step dispatches a handful of calls at most: a scan of the list
        // costs less than building a Set of it for every step.
        const dispatchedIds = entry.dispatched;
        for (const call of entry.calls) {
          const dispatched = dispatchedIds !== undefined && dispatchedIds.includes(call.callId);
          const open: OpenCall = {
            callId: call.callId,
            name: call.name,
            runId: entry.runId,
            dispatched,
            started: dispatched,
            step: entry.step,
            arguments: call.arguments,
          };
          if (
            !dispatched && call.decision === "allow" && call.interactionId === undefined &&
            !call.invalid && !call.repeated
          ) open.mayHaveRun = true;
          // A call id seen again takes the earlier one's place (as a Map's set
          // would). The first call makes a one-slot list (a push onto an empty
          // one reserves 17, and most steps make one call).
          const calls = this.#calls;
          const index = calls ? indexOf(calls, call.callId) : -1;
          if (!calls) this.#calls = [open];
          else if (index < 0) calls.push(open);
          else calls[index] = open;
        }
        return;
      }
      case "tool_dispatched":
        for (const callId of entry.callIds) {
          const call = this.#find(callId);
          if (call) call.dispatched = call.started = true;
        }
        for (const callId of entry.safe ?? []) {
          const call = this.#find(callId);
          if (call) call.started = true;
        }
        return;
      case "tool_results": {
        // A result for an interrupted call (its re-run) settles it for good.
        if (this.#interrupted) this.#dropInterrupted(entry.results);
        const calls = this.#calls;
        if (!calls) return;
        for (const result of entry.results) {
          const index = indexOf(calls, result.callId);
          if (index < 0) continue;
          const call = calls[index];
          if (
            result.status === "cancelled" && !call.dispatched && (call.started || call.mayHaveRun)
          ) (this.#cutOff ??= []).push({ ...call, turnId: entry.turnId });
          calls.splice(index, 1);
        }
        if (calls.length === 0) this.#calls = undefined;
        return;
      }
      case "compaction":
      case "compaction_started":
      case "child_events":
      case "note":
      case "interaction_opened":
      case "interaction_resolved":
      case "steer":
        return;
      default: {
        const never: never = entry;
        throw new Error(`Unhandled entry ${(never as Entry).kind}`);
      }
    }
  }

  /** The calls without a result, in call order. */
  list(): OpenCall[] {
    return this.#calls ? this.#calls.slice() : [];
  }

  /**
   * The `none`/`read` calls a crash cut off (their turn ended `interrupted`)
   * that the model has not answered past: what a resumed retry runs again
   * before its first request. Empty once any later step or result moved on.
   */
  interrupted(): InterruptedCall[] {
    return this.#interrupted ? this.#interrupted.slice() : [];
  }

  #dropInterrupted(results: readonly ToolOutcome[]): void {
    const left = this.#interrupted!.filter((call) =>
      !results.some((result) => result.callId === call.callId)
    );
    this.#interrupted = left.length > 0 ? left : undefined;
  }

  #find(callId: string): OpenCall | undefined {
    const calls = this.#calls;
    if (!calls) return undefined;
    const index = indexOf(calls, callId);
    return index < 0 ? undefined : calls[index];
  }
}

/** Where the call `callId` sits in `calls`, or -1. */
function indexOf(calls: readonly OpenCall[], callId: string): number {
  for (let i = 0; i < calls.length; i++) if (calls[i].callId === callId) return i;
  return -1;
}

/**
 * Results for calls that will never finish: `unknown` when their side effect
 * may have happened, otherwise `cancelled`.
 *
 * @returns the results (in call order) and whether any is `unknown`
 */
export function settleOpenCalls(
  open: readonly OpenCall[],
): { results: ToolOutcome[]; unknown: boolean } {
  let unknown = false;
  const results = open.map((call): ToolOutcome => {
    if (call.dispatched) {
      unknown = true;
      return {
        callId: call.callId,
        name: call.name,
        status: "unknown",
        output:
          "The outcome of this call is unknown: it was started but its result was never recorded. " +
          "Its side effect may or may not have happened.",
      };
    }
    // No call that may have run is told to the model as never run (DESIGN §11).
    if (call.started || call.mayHaveRun) {
      return {
        callId: call.callId,
        name: call.name,
        status: "cancelled",
        output: "The call was interrupted before its result was recorded. It may have run; " +
          "it changes nothing outside the engine, so it is safe to call again.",
      };
    }
    return {
      callId: call.callId,
      name: call.name,
      status: "cancelled",
      output: "The call was cancelled before it ran.",
    };
  });
  return { results, unknown };
}
