/**
 * Starts runs on a thread actor and implements the loop's {@link RunHost}:
 * every commit a run makes takes the thread's lock briefly and first checks
 * that the run still owns the thread. Provider and tool I/O never hold it.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { type RunHost, runTurn } from "../engine/run_loop.ts";
import { newId } from "../identity/ids.ts";
import type { NewEntry } from "../journal/entries.ts";
import { keys } from "../journal/keys.ts";
import type { ActiveRun } from "./active_run.ts";
import type { ObservationEvent } from "../observation/events.ts";
import { StaleThreadError, type ThreadActor } from "./thread_actor.ts";
import { type HandOver, planTurnEnd } from "./turn_end.ts";

/** What runs need from the service. */
export interface RunDeps {
  observe(event: ObservationEvent): void;
  /** The agent for a turn (from `{ agent }` or the host's `agentFactory`). */
  resolveAgent(threadId: string, turnId: string): Promise<Agent>;
  /** Whether the host listens to observation events at all. */
  observing: boolean;
  /** A run started (its lease needs keeping). */
  onRunStart(): void;
  /** A run finished (the actor may be evicted from the cache). */
  onRunEnd(actor: ThreadActor): void;
}

/**
 * Starts a run for the admitted turn `turnId`. Call inside the actor's lock,
 * right after the admission commit.
 */
export function startRun(
  actor: ThreadActor,
  agent: Agent,
  turnId: string,
  runId: string,
  deps: RunDeps,
): ActiveRun {
  const threadId = actor.threadId;
  const run: ActiveRun = {
    turnId,
    runId,
    agent,
    providerAbort: new AbortController(),
    toolAbort: new AbortController(),
    stopRequested: false,
    done: Promise.resolve(),
    batch: undefined,
    partial: undefined,
  };
  actor.run = run;
  actor.stopping = false;
  deps.onRunStart();
  // Events are built only when someone listens: this runs several times per step.
  const observe = deps.observing
    ? (type: string, detail: Record<string, unknown>): void =>
      deps.observe({ type, threadId, turnId, runId, at: new Date().toISOString(), ...detail })
    : noop;

  /**
   * Runs `change` under the lock while this run still owns the thread. When
   * another writer changed the record first (say, a host that queued input),
   * the actor has reloaded and the change is planned again on the new state.
   */
  const owned = (change: () => Promise<void>): Promise<boolean> =>
    actor.exclusive(async () => {
      for (let attempt = 1;; attempt++) {
        if (actor.record.active?.runId !== runId || actor.run !== run) return false;
        try {
          await change();
          return true;
        } catch (error) {
          if (!(error instanceof StaleThreadError) || attempt >= 5) throw error;
        }
      }
    });

  const endWith = async (
    entries: NewEntry[],
    end: Parameters<typeof planTurnEnd>[1],
  ): Promise<void> => {
    let handOver: (HandOver & { agent: Agent }) | undefined;
    if (end.outcome === "completed" && actor.record.queue.length > 0) {
      const nextTurn = newId("turn");
      try {
        const nextAgent = await deps.resolveAgent(threadId, nextTurn);
        handOver = {
          turnId: nextTurn,
          runId: newId("run"),
          agentId: nextAgent.id,
          agent: nextAgent,
        };
      } catch (error) {
        observe("queue.handover_failed", {
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    const planned = planTurnEnd(actor.record, end, handOver);
    await actor.commit({ record: planned.record, entries: [...entries, ...planned.entries] });
    run.partial = undefined;
    actor.setProgress(undefined);
    observe("turn.ended", { outcome: end.outcome, failureCode: end.failure?.code });
    if (handOver) {
      deps.observe({
        type: "turn.started",
        threadId,
        turnId: handOver.turnId,
        runId: handOver.runId,
        at: new Date().toISOString(),
      });
      startRun(actor, handOver.agent, handOver.turnId, handOver.runId, deps);
    }
  };

  const host: RunHost = {
    // A getter: a reload replaces the actor's projections.
    get history() {
      return actor.history;
    },
    signal: run.providerAbort.signal,
    toolSignal: run.toolAbort.signal,
    stopRequested: () => run.stopRequested,
    progress: (phase, step, attempt) => actor.setProgress({ turnId, runId, step, phase, attempt }),
    liveDelta: (step, kind, delta) => {
      if (run.partial?.step !== step) run.partial = { step, text: "", reasoning: "" };
      if (kind === "assistant") run.partial.text += delta;
      else run.partial.reasoning += delta;
      actor.view.liveDelta(turnId, runId, step, kind, delta);
    },
    dropLive: (step) => {
      run.partial = undefined;
      actor.view.dropLive(runId, step);
    },
    commitStep: (step, end) =>
      owned(async () => {
        if (end) return endWith([step], { turnId, runId, outcome: end.outcome });
        await actor.commit({ record: null, entries: [step] });
        run.partial = undefined;
      }),
    commitResults: (results, artifacts) =>
      owned(() =>
        actor.commit({
          record: null,
          entries: [results],
          set: artifacts.map((artifact) => ({
            key: keys.artifact(threadId, artifact.id),
            value: { id: artifact.id, turnId, runId, callId: artifact.callId, text: artifact.text },
          })),
        })
      ),
    endTurn: (outcome, failure) => owned(() => endWith([], { turnId, runId, outcome, failure })),
    batchStarted: (batch) => {
      run.batch = batch.then(noop, noop);
    },
    observing: deps.observing,
    observe,
    newId,
  };

  run.done = runTurn(agent, host, { threadId, turnId, runId })
    .catch(async (error) => {
      // A store failure mid-run: the turn stays active in the journal and is
      // settled like a crash by the next command on this thread.
      observe("run.failed", { message: error instanceof Error ? error.message : String(error) });
      await actor.exclusive(() => actor.refresh()).catch(noop);
    })
    .finally(() => {
      if (actor.run === run) {
        actor.run = undefined;
        actor.setProgress(undefined);
        actor.publishStatus();
      }
      deps.onRunEnd(actor);
    });
  return run;
}

function noop(): void {}
