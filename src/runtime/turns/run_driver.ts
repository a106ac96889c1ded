/**
 * Driving the runs of one thread in this process, as a plain sequence: the
 * admitted turn's run, then the run of each queued turn that a completed turn
 * hands over to, until no turn follows.
 *
 * @module
 */
import { runCompactionTurn } from "../../engine/compaction/manual_run.ts";
import { continueTurn, runGuarded, type RunHost, runTurn } from "../../engine/run/run_loop.ts";
import type { Agent } from "../../config/agent.ts";
import { frozenAgent } from "../../engine/run/turn_surface.ts";
import { CONTINUE_NOTE } from "../../tools/goal_state.ts";
import type { ActiveRun } from "../actor/active_run.ts";
import { type RunDeps, ThreadRunHost } from "./run_host.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";

/**
 * Drives `first` (just admitted, already the actor's run) and every run
 * handed over after it. Returns at once; each run's `done` settles when it
 * has returned.
 */
export function driveRuns(actor: ThreadActor, first: ActiveRun, deps: RunDeps): void {
  deps.onRunStart(first);
  void driveAll(actor, first, deps);
}

/** The runs one after another, then the thread's runs have ended (a `finally` of its own, not a promise's). */
async function driveAll(actor: ThreadActor, first: ActiveRun, deps: RunDeps): Promise<void> {
  try {
    let run: ActiveRun | undefined = first;
    while (run) {
      const next: ActiveRun | undefined = await driveRun(actor, run, deps);
      // A stop (shutdown, delete) that came while the run was committing its turn's end can
      // no longer prevent the hand-over in that commit; it reaches the turn handed over to,
      // which then stops before its first model call. A graceful cancel stops only its own
      // turn: a turn that still ended on its own hands over as usual.
      if (next && run.stoppedWhole) next.stop("The run that handed over to this turn was stopped");
      run = next;
    }
  } finally {
    deps.onRunEnd(actor);
  }
}

/** The rest of a `continueGoal` compaction turn: a runtime note, then the model loop. */
function goalContinuation(
  agent: Agent,
  ids: { threadId: string; turnId: string; runId: string },
): (host: RunHost) => Promise<void> {
  return async (host) => {
    const note = {
      kind: "note" as const,
      turnId: ids.turnId,
      runId: ids.runId,
      text: CONTINUE_NOTE,
    };
    if (!await host.commitEntries([note], [])) return;
    await continueTurn(agent, host, ids);
  };
}

/**
 * One run, start to end.
 *
 * @returns the run of the turn its end handed over to, if any
 */
async function driveRun(
  actor: ThreadActor,
  run: ActiveRun,
  deps: RunDeps,
): Promise<ActiveRun | undefined> {
  const host = new ThreadRunHost(actor, run, deps);
  if (host.observing) host.observe("turn.started", {});
  let failed = false;
  try {
    const ids = { threadId: actor.threadId, turnId: run.turnId, runId: run.runId };
    const equipped = deps.equip ? deps.equip(run.agent, actor.record) : run.agent;
    // A resumed turn tells the model what it was told at admission (handlers stay live).
    const agent = run.surface ? frozenAgent(equipped, run.surface) : equipped;
    const operationId = run.compaction;
    if (operationId !== undefined) {
      const then = run.continueGoal ? goalContinuation(agent, ids) : undefined;
      await runGuarded(host, (h) => runCompactionTurn(agent, h, { ...ids, operationId }, then));
    } else if (run.continueGoal) {
      await runGuarded(host, goalContinuation(agent, ids));
    } else await runTurn(agent, host, ids);
  } catch (error) {
    // Only a failed commit gets here (runTurn and runGuarded turn anything
    // else into a turn failure): the store did not answer, so the turn may still be
    // active in the journal with no run behind it.
    failed = true;
    host.observe("run.failed", { message: error instanceof Error ? error.message : String(error) });
  } finally {
    actor.endRun(run);
    run.finished();
  }
  // Settle it as soon as the store answers again, without waiting for a command.
  if (failed) deps.settleWhenStoreAnswers(actor);
  return host.handedOver;
}
