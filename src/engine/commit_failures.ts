/**
 * Inside a run, a failed commit is the store's problem (the turn is settled
 * once the store answers again), while anything else that throws is a broken
 * contract (the turn fails with `engine_contract`). This wrapper marks every
 * commit's failure so the run loop can tell the two apart.
 *
 * @module
 */
import type {
  NewEntry,
  SupplementalContext,
  TurnFailure,
  TurnOutcome,
} from "../journal/entries.ts";
import type { NewCompaction } from "./compaction/compact.ts";
import type { HistoryReader } from "../projection/history_model.ts";
import type { InteractionsReader } from "../projection/interactions.ts";
import type { OpenCallsReader } from "../projection/open_calls.ts";
import type { NewResults, NewStep, RunHost } from "./run_loop.ts";
import type { Artifact } from "../projection/view_types.ts";

/** Marks the failures of a run host's commits. */
export class CommitFailures {
  readonly #failures = new WeakMap<object, unknown>();
  /** The step whose live text is showing, dropped when the turn fails. */
  liveStep: number | undefined;

  /**
   * The host with every commit's failure marked (and live steps tracked).
   *
   * @param host the thread's side of the run
   * @returns a host that delegates every call to `host`
   */
  wrap(host: RunHost): RunHost {
    const mark = <T>(commit: () => Promise<T>): Promise<T> => {
      let pending: Promise<T>;
      try {
        pending = commit();
      } catch (error) {
        pending = Promise.reject(error);
      }
      return pending.catch((error: unknown) => {
        const marker = new Error("A commit of the run failed", { cause: error });
        this.#failures.set(marker, error);
        throw marker;
      });
    };
    const admitChildEvents = host.admitChildEvents?.bind(host);
    const wrapped: RunHost = {
      get history(): HistoryReader {
        return host.history;
      },
      // Memory only, set when the turn starts; read through so the host stays the owner.
      get supplementalContext(): readonly SupplementalContext[] | undefined {
        return host.supplementalContext;
      },
      get interactions(): InteractionsReader {
        return host.interactions;
      },
      get openCalls(): OpenCallsReader {
        return host.openCalls;
      },
      stepSignal: () => host.stepSignal(),
      steerCount: () => host.steerCount(),
      takeSteered: () => host.takeSteered(),
      secrets: () => host.secrets(),
      commitEntries: (entries: NewEntry[], artifacts: Artifact[]) =>
        mark(() => host.commitEntries(entries, artifacts)),
      // Parking commits the `waiting` status: its failure is the store's too.
      park: () => mark(() => host.park()),
      signal: host.signal,
      toolSignal: host.toolSignal,
      observing: host.observing,
      stopRequested: () => host.stopRequested(),
      progress: (phase, step, attempt) => host.progress(phase, step, attempt),
      liveDelta: (step, kind, delta) => {
        this.liveStep = step;
        host.liveDelta(step, kind, delta);
      },
      dropLive: (step) => host.dropLive(step),
      commitStep: (
        step: NewStep,
        end?: { outcome: TurnOutcome; steers?: number },
        also?: NewEntry[],
      ) => mark(() => host.commitStep(step, end, also)),
      commitResults: (results: NewResults, artifacts: Artifact[], also?: NewEntry[]) =>
        mark(() => host.commitResults(results, artifacts, also)),
      commitCompaction: (entry: NewCompaction) => mark(() => host.commitCompaction(entry)),
      endTurn: (outcome: TurnOutcome, failure?: TurnFailure) =>
        mark(() => host.endTurn(outcome, failure)),
      batchStarted: (batch) => host.batchStarted(batch),
      observe: (type, detail) => host.observe(type, detail),
      newId: (prefix) => host.newId(prefix),
    };
    // Optional, so present only when the host has it (sub-agent facts commit too).
    if (admitChildEvents) wrapped.admitChildEvents = () => mark(admitChildEvents);
    return wrapped;
  }

  /**
   * The commit's own error when `error` marks a failed commit.
   *
   * @param error what the loop threw
   * @returns the commit's error, or `undefined` for anything else
   */
  causeOf(error: unknown): unknown {
    return typeof error === "object" && error !== null && this.#failures.has(error)
      ? this.#failures.get(error)
      : undefined;
  }
}
