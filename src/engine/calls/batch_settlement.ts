/**
 * Finishing a batch that waits for people: approved calls run as soon as
 * their approval is committed (in whichever run is alive then), denied ones
 * become `denied` results, and the batch's results reach the model only once
 * every call has a result and no question of the turn is pending. When
 * nothing can move, the run parks the turn (status `waiting`) and returns;
 * `respond` starts a new run of the same turn from the journal.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { NewEntry, ToolOutcome } from "../../journal/entries.ts";
import type { InteractionsReader } from "../../projection/interactions.ts";
import type { OpenCall } from "../../projection/open_calls.ts";
import { implementationOf, needsDispatchMarker } from "../../tools/define_tool.ts";
import type { RunHost } from "../run/run_loop.ts";
import { goneMessage, type PlannedCall } from "./tool_calls.ts";
import { openForInputs } from "./interaction_plan.ts";
import { runBatch } from "./tool_runner.ts";
import { settledBatch } from "./settled_batch.ts";

/** Open calls whose approval is resolved but which have not started. */
export function decidedCalls(
  open: readonly OpenCall[],
  interactions: InteractionsReader,
  turnId: string,
): { approved: OpenCall[]; refused: OpenCall[] } {
  const approved: OpenCall[] = [];
  const refused: OpenCall[] = [];
  for (const call of open) {
    if (call.started) continue;
    const state = interactions.ofCall(turnId, call.callId);
    if (state?.kind !== "approval" || !state.resolution) continue;
    const resolution = state.resolution;
    if (resolution.type === "decision" && resolution.decision === "approve") approved.push(call);
    else refused.push(call);
  }
  return { approved, refused };
}

/** Whether the turn's batch is finished: every call has a result and nothing is pending. */
export function batchFinished(
  open: readonly OpenCall[],
  interactions: InteractionsReader,
  turnId: string,
): boolean {
  return open.length === 0 && interactions.pendingOf(turnId).length === 0;
}

/** Whether a parked turn would have work for a run now. */
export function hasWork(
  open: readonly OpenCall[],
  interactions: InteractionsReader,
  turnId: string,
): boolean {
  const { approved, refused } = decidedCalls(open, interactions, turnId);
  return approved.length > 0 || refused.length > 0 || batchFinished(open, interactions, turnId);
}

/**
 * Drives the turn's open batch until it is finished (`continue`: the next
 * provider request may go) or the run must return (`return`: parked, ended
 * or lost).
 */
export async function settleBatch(
  agent: Agent,
  host: RunHost,
  ids: { threadId: string; turnId: string; runId: string },
): Promise<"continue" | "return"> {
  for (;;) {
    if (host.stopRequested() || host.signal.aborted) return "return";
    const open = host.openCalls.list();
    const { approved, refused } = decidedCalls(open, host.interactions, ids.turnId);
    if (approved.length === 0 && refused.length === 0) {
      if (batchFinished(open, host.interactions, ids.turnId)) return "continue";
      const parked = await host.park();
      if (parked !== "runnable") return "return";
      continue;
    }
    const entries: NewEntry[] = [];
    const denied = refused.map((call): ToolOutcome => ({
      callId: call.callId,
      name: call.name,
      status: "denied",
      output: `The user denied the call to ${call.name}; it was not run.`,
    }));
    if (refused.length > 0) {
      entries.push({
        kind: "tool_results",
        turnId: ids.turnId,
        runId: refused[0].runId,
        results: denied,
      });
    }
    const planned = approved.map((call) => planApproved(agent, call));
    if (approved.length > 0) {
      const effectful = planned.filter((call) => call.tool && needsDispatchMarker(call.tool.effect))
        .map((call) => call.record.callId);
      const safe = approved.map((call) => call.callId).filter((id) => !effectful.includes(id));
      const dispatched: NewEntry = {
        kind: "tool_dispatched",
        turnId: ids.turnId,
        runId: approved[0].runId,
        callIds: effectful,
      };
      if (safe.length > 0) dispatched.safe = safe;
      entries.push(dispatched);
    }
    // The marker commits before any approved handler starts: a crash after it leaves `unknown`.
    if (!await host.commitEntries(entries, [])) return "return";
    // Observers hear of these calls as of those the run loop dispatches at once
    // (an approved call used to run with no tool event at all).
    observeResults(host, denied, 0);
    if (approved.length === 0) continue;
    const started = observeDispatched(host, planned);
    // A handler may ignore its signal: once tools are told to stop, stop waiting.
    const { outcomes, artifacts, inputs, rejectedActivity } = await settledBatch(
      host,
      runBatch(
        planned,
        { ...ids, labels: host.labels, signal: host.toolSignal },
        () => host.newId("artifact"),
      ),
    );
    const results: NewEntry[] = [{
      kind: "tool_results",
      turnId: ids.turnId,
      runId: approved[0].runId,
      results: outcomes,
    }];
    results.push(
      ...openForInputs(inputs, {
        ...ids,
        runId: approved[0].runId,
        newId: (prefix) => host.newId(prefix),
      }),
    );
    if (!await host.commitEntries(results, artifacts)) return "return";
    observeResults(host, outcomes, started);
    observeOpened(host, results);
    for (const rejected of rejectedActivity) host.observe("tool.activity_rejected", rejected);
    if (outcomes.some((outcome) => outcome.status === "unknown")) {
      await host.endTurn("failed", {
        code: "effect_outcome_unknown",
        message: "A tool reported that its side effect may or may not have happened",
      });
      return "return";
    }
  }
}

/**
 * A recorded call (approved, or cut off by a crash), validated again from its
 * recorded arguments (the agent may have changed).
 */
export function planApproved(agent: Agent, call: OpenCall): PlannedCall {
  const record = { callId: call.callId, name: call.name, arguments: call.arguments };
  const definition = agent.tools.get(call.name);
  const tool = definition && implementationOf(definition);
  if (!tool) {
    // An ordinary error result the model reads, not an invalid-argument episode.
    return {
      record: { ...record, decision: "allow" },
      failure: goneMessage(call.name, agent.tools.keys()),
    };
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch {
    return { record: { ...record, invalid: `The arguments of ${call.name} are not valid JSON.` } };
  }
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) {
    return { record: { ...record, invalid: `The arguments of ${call.name} no longer match.` } };
  }
  return { record: { ...record, decision: "allow" }, tool, input: parsed.data };
}

/**
 * Tells observers which calls start now (the run loop's at once, a batch's
 * once approved); their clock starts only when someone listens.
 *
 * @param host the run's host
 * @param planned the calls about to run (an invalid or unknown one never runs and is skipped)
 * @returns the start time for {@link observeResults} (0 when nobody observes)
 */
export function observeDispatched(host: RunHost, planned: readonly PlannedCall[]): number {
  if (!host.observing) return 0;
  for (const call of planned) {
    if (!call.tool || call.record.invalid) continue; // answered by an error result, never run
    host.observe("tool.dispatched", {
      callId: call.record.callId,
      name: call.record.name,
      effect: call.tool.effect,
    });
  }
  return Date.now();
}

/**
 * Tells observers the committed results of calls.
 *
 * @param host the run's host
 * @param outcomes the committed results
 * @param started what {@link observeDispatched} returned (0: none of them ran)
 */
export function observeResults(
  host: RunHost,
  outcomes: readonly ToolOutcome[],
  started: number,
): void {
  if (!host.observing) return;
  const durationMs = started === 0 ? 0 : Date.now() - started;
  for (const outcome of outcomes) {
    host.observe("tool.result", {
      callId: outcome.callId,
      name: outcome.name,
      status: outcome.status,
      durationMs,
    });
  }
}

/** Tells observers which interactions opened (never their answers). */
export function observeOpened(host: RunHost, entries: readonly NewEntry[]): void {
  if (!host.observing) return;
  for (const entry of entries) {
    if (entry.kind !== "interaction_opened") continue;
    host.observe("interaction.opened", {
      interactionId: entry.interactionId,
      kind: entry.interaction,
      callId: entry.callId,
      toolName: entry.toolName,
    });
  }
}
