/**
 * `respond`: resolves a pending approval or question. The resolution is a
 * journal entry; when it leaves a waiting turn with work to do, the same
 * commit admits a new run of that turn, which carries on from the journal.
 * Secret answers never reach the store: they live in that run's memory.
 *
 * @module
 */
import { isExhaustive, optionValues } from "../../tools/question_shape.ts";
import { nowIso } from "../../journal/now_iso.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { InteractionResolution, NewEntry } from "../../journal/entries.ts";
import type { ThreadRecord } from "../../journal/thread_record.ts";
import { answersText, askUserOutput } from "../../projection/history/answers_message.ts";
import type { InteractionState } from "../../projection/interactions.ts";
import type { ThreadView } from "../../projection/view/view_types.ts";
import { ASK_USER_TOOL } from "../../tools/builtin_names.ts";
import { recordedSurface } from "../turns/surface_record.ts";
import { ActiveRun } from "../actor/active_run.ts";
import { driveRuns } from "../turns/run_driver.ts";
import { claimOf, commandKey, replayOf } from "./request_keys.ts";
import type { ServiceContext } from "./service_context.ts";
import { secretAnswersOf, secretRunOf } from "../turns/secret_delivery.ts";
import { reaskEntries, settleOrphan } from "../turns/settle_turn.ts";
import { retryStale } from "../actor/stale_retry.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";

/** The longest answer accepted, in characters. */
export const MAX_ANSWER_LENGTH = 16_000;

/** A validated `respond`. */
export interface RespondCommand {
  threadId: string;
  requestKey: string;
  interactionId: string;
  decision?: "approve" | "deny";
  answers?: { questionId: string; value: string }[];
}

/**
 * Resolves a pending interaction. An actor in memory is taken as it is, so
 * the command asks for the thread's lock in the tick it was called and keeps
 * its place among commands issued without awaiting (`respond()` then
 * `cancel()`: the approval lands first, then the stop).
 */
export function respond(
  ctx: ServiceContext,
  command: RespondCommand,
): Promise<{ view: ThreadView }> {
  return ctx.actors.withActor(command.threadId, (actor) => respondOn(ctx, actor, command));
}

/** {@link respond} on the thread's actor. */
function respondOn(
  ctx: ServiceContext,
  actor: ThreadActor,
  command: RespondCommand,
): Promise<{ view: ThreadView }> {
  const { threadId, requestKey, interactionId } = command;
  return retryStale(() =>
    actor.exclusive(async () => {
      ctx.assertOpen();
      actor.assertLive();
      if (!actor.run) await actor.sync();
      // A deferred host leaves a turn the previous process left unfinished as it is:
      // `activate()` settles it, or `prepareRestore()` stops it as `restored_turn`.
      const leftover = ctx.gate.deferred && actor.abandoned;
      if (!leftover) await settleOrphan(actor);
      const state = actor.interactions.get(interactionId);
      if (!state) {
        // The key's fingerprint names its interaction: one that answered another is not a replay.
        const prior = await ctx.journal.request(threadId, requestKey);
        if (prior?.op === "respond") {
          throw new FloretError(
            "request_conflict",
            `Request key was already used to answer another interaction: ${requestKey}`,
          );
        }
        throw new FloretError("interaction_not_found", `No interaction with id: ${interactionId}`);
      }
      const { resolution, secrets } = resolutionOf(state, command);
      const key = await commandKey(command, "respond", { interactionId, resolution });
      if (await replayOf(ctx.journal, threadId, key)) {
        return { view: actor.snapshot() };
      }
      if (state.resolution) {
        if (sameResolution(state.resolution, resolution)) return { view: actor.snapshot() };
        throw new FloretError(
          "request_conflict",
          `Interaction ${interactionId} was already resolved differently`,
        );
      }
      if (leftover) ctx.gate.assertExecutable("respond to a turn left unfinished");
      return await commitResolution(ctx, actor, state, resolution, secrets, claimOf(key));
    })
  );
}

/** Checks the command against the interaction's kind and questions. */
function resolutionOf(
  state: InteractionState,
  command: RespondCommand,
): { resolution: InteractionResolution; secrets: Map<string, string> } {
  const secrets = new Map<string, string>();
  if (state.kind === "approval") {
    if (command.answers !== undefined) {
      throw new FloretError("invalid_input", "An approval takes a decision, not answers");
    }
    if (command.decision === undefined) {
      throw new FloretError("invalid_input", "An approval needs a decision: approve or deny");
    }
    return { resolution: { type: "decision", decision: command.decision }, secrets };
  }
  if (command.decision !== undefined) {
    throw new FloretError("invalid_input", "A question takes answers, not a decision");
  }
  if (command.answers === undefined) {
    throw new FloretError("invalid_input", "A question needs answers");
  }
  const questions = new Map((state.questions ?? []).map((question) => [question.id, question]));
  const given = new Map<string, string>();
  for (const answer of command.answers) {
    const question = questions.get(answer.questionId);
    if (!question) {
      throw new FloretError("invalid_input", `No question with id: ${answer.questionId}`);
    }
    if (given.has(answer.questionId)) {
      throw new FloretError("invalid_input", `Question answered twice: ${answer.questionId}`);
    }
    if (answer.value.length > MAX_ANSWER_LENGTH) {
      throw new FloretError(
        "invalid_input",
        `Answer to ${answer.questionId} is longer than ${MAX_ANSWER_LENGTH} characters`,
      );
    }
    if (isExhaustive(question) && !optionValues(question).includes(answer.value)) {
      throw new FloretError(
        "invalid_input",
        `Answer to ${answer.questionId} must be one of: ${optionValues(question).join(", ")}`,
      );
    }
    given.set(answer.questionId, answer.value);
  }
  const missing = [...questions.keys()].filter((id) => !given.has(id));
  if (missing.length > 0) {
    throw new FloretError("invalid_input", `Unanswered questions: ${missing.join(", ")}`);
  }
  const answers: { questionId: string; value: string }[] = [];
  const redacted: string[] = [];
  for (const question of state.questions ?? []) {
    const value = given.get(question.id)!;
    if (question.secret) {
      redacted.push(question.id);
      secrets.set(question.id, value);
    } else answers.push({ questionId: question.id, value });
  }
  return { resolution: { type: "answers", answers, redacted }, secrets };
}

/** Secret values cannot be compared (they were never kept): the public part decides. */
function sameResolution(a: InteractionResolution, b: InteractionResolution): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function commitResolution(
  ctx: ServiceContext,
  actor: ThreadActor,
  state: InteractionState,
  resolution: InteractionResolution,
  secrets: Map<string, string>,
  claim: ReturnType<typeof claimOf>,
): Promise<{ view: ThreadView }> {
  const entries: NewEntry[] = [];
  const askUserCall = state.kind === "input" && state.toolName === ASK_USER_TOOL &&
    state.callId !== undefined;
  if (askUserCall && resolution.type === "answers") {
    entries.push({
      kind: "tool_results",
      turnId: state.turnId,
      runId: state.runId,
      results: [{
        callId: state.callId!,
        name: ASK_USER_TOOL,
        status: "completed",
        output: askUserOutput(resolution.redacted),
      }],
    });
  }
  const resolved: NewEntry = {
    kind: "interaction_resolved",
    turnId: state.turnId,
    interactionId: state.id,
    resolution,
  };
  entries.push(resolved);

  const record = actor.record;
  const live = actor.run?.turnId === state.turnId && record.active?.runId === actor.run.runId
    ? actor.run
    : undefined;
  let admitted: ActiveRun | undefined;
  let next: ThreadRecord | null = null;
  const waking = record.waiting?.turnId === state.turnId && !record.active && wakes(actor, state);
  // Secret answers given while no run was alive, and lost with the process before any run got
  // them: the run about to start would send a redaction marker instead, so they are asked again
  // (the turn keeps waiting) rather than the run starting without them.
  const lost = waking ? heldSecretsLost(actor, state) : [];
  if (lost.length > 0) entries.push(...reaskEntries(state.turnId, record.waiting!.runId, lost));
  if (waking && lost.length === 0) {
    // A deferred host records nothing that would start a run (the key stays unused).
    ctx.gate.assertExecutable("respond would start a run");
    const runId = newId("run");
    const agent = await ctx.runs.resolveAgent(actor.threadId, state.turnId, record);
    admitted = new ActiveRun(state.turnId, runId, agent);
    // The waiting turn goes on under the surface its admission recorded.
    const surface = record.lastTurn?.turnId === state.turnId
      ? await recordedSurface(ctx.journal, record)
      : undefined;
    if (surface) admitted.surface = surface;
    next = {
      ...record,
      status: "running",
      active: { turnId: state.turnId, runId },
      updatedAt: nowIso(),
    };
    delete next.waiting;
  }
  const carrier = admitted ?? live;
  if (carrier) resolved.runId = carrier.runId;
  await actor.commit({ record: next, entries, request: claim });
  if (secrets.size > 0 && resolution.type === "answers") {
    const answers = new Map(resolution.answers.map((a) => [a.questionId, a.value]));
    const message = {
      role: "user" as const,
      text: answersText(state.questions ?? [], answers, secrets),
    };
    const values = [...secrets.values()];
    if (carrier) carrier.addSecret(state.id, message, values);
    else actor.unstored.holdSecret(state.turnId, state.id, message, values);
  }
  if (ctx.runs.observing) {
    ctx.runs.observe({
      type: "interaction.resolved",
      threadId: actor.threadId,
      turnId: state.turnId,
      runId: carrier?.runId,
      at: nowIso(),
      interactionId: state.id,
      kind: state.kind,
      // The decision, or how many answers: never their values.
      decision: resolution.type === "decision" ? resolution.decision : undefined,
      answered: resolution.type === "answers"
        ? resolution.answers.length + resolution.redacted.length
        : undefined,
      ...labelsOfTurn(actor.history.labelsOf(state.turnId)),
    });
  }
  if (admitted) {
    actor.beginRun(admitted);
    driveRuns(actor, admitted, ctx.runs);
  } else actor.publishStatus();
  return { view: actor.snapshot() };
}

/** Whether resolving `state` gives its waiting turn work: a decided call, or a finished batch. */
function wakes(actor: ThreadActor, state: InteractionState): boolean {
  if (state.kind === "approval") return true;
  const otherPending = actor.interactions.pendingOf(state.turnId).filter((other) =>
    other.id !== state.id
  );
  // An approved call still waiting for its dispatch is work for the run this starts.
  const open = actor.openCalls.list().filter((call) =>
    call.callId !== state.callId &&
    actor.interactions.ofCall(state.turnId, call.callId)?.resolution?.type !== "decision"
  );
  return otherPending.length === 0 && open.length === 0;
}

/** Answered questions of `state`'s turn whose secrets no run received and this process lost. */
function heldSecretsLost(actor: ThreadActor, state: InteractionState): InteractionState[] {
  const all = actor.interactions.all();
  return secretAnswersOf(all, state.turnId).filter((other) =>
    other.id !== state.id && secretRunOf(all, other) === undefined &&
    !actor.unstored.holdsSecret(other.id)
  );
}

/** `{ labels }` for an event of a turn with run labels, else nothing to add. */
function labelsOfTurn(
  labels: Readonly<Record<string, string>>,
): { labels?: Readonly<Record<string, string>> } {
  return Object.keys(labels).length > 0 ? { labels } : {};
}
