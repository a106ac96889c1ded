/**
 * Admitting a turn: the one way a turn starts, whether `send`, `retry` or
 * `promoteQueued` asks for it or a completed turn hands over to the next
 * queued input. One commit writes the `turn_started` entry, marks the thread
 * running and claims the request key; the actor then takes on the new run.
 *
 * @module
 */
import { nowIso } from "../../journal/now_iso.ts";
import type { Agent } from "../../config/agent.ts";
import { FloretError } from "../../errors.ts";
import { newId } from "../../identity/ids.ts";
import type { AdmittedInput, NewEntry, SupplementalContext } from "../../journal/entries.ts";
import type { RequestRecord } from "../../journal/journal.ts";
import type { QueuedItem, ThreadRecord } from "../../journal/thread_record.ts";
import { keys } from "../../journal/keys.ts";
import { ActiveRun } from "../actor/active_run.ts";
import { itemsMadeBy } from "../../projection/view/item_count.ts";
import { firstMessageTitle } from "./titles.ts";
import type { ThreadActor } from "../actor/thread_actor.ts";
import type { Equip } from "../../subagents/equip.ts";
import type { FingerprintedSurface } from "../../engine/run/turn_surface.ts";
import { liveSurface, recordedSurface, remember, surfaceWrites } from "./surface_record.ts";

/** Where a turn's agent comes from. */
export interface AgentResolver {
  /**
   * The agent for a turn (from `{ agent }` or the host's `agentFactory`);
   * `known` is the thread's record as the caller holds it, if it does.
   */
  resolveAgent(threadId: string, turnId: string, known?: ThreadRecord): Promise<Agent>;
  /**
   * The agent {@link resolveAgent} would resolve for a thread whose record is
   * `known`, when it is known without waiting (the host's one agent, for a
   * thread that is no sub-agent's child); otherwise `undefined`.
   */
  agentNow?(known: ThreadRecord): Agent | undefined;
  /** Adds the built-in tools a run gets (the surface a turn records includes them). */
  equip?: Equip;
  /** A first message's admission claimed a generated title: start its request. */
  titleClaimed?(threadId: string, agent: Agent, input: AdmittedInput, generation: number): void;
}

/** A turn about to be admitted: its ids and its agent. */
export interface PreparedTurn {
  turnId: string;
  runId: string;
  agent: Agent;
}

/** What a new turn starts from. */
export interface Admission {
  /** The request key that asked for the turn (recorded on `turn_started`). */
  requestKey: string;
  input?: AdmittedInput;
  /** Memory only: handed to the run, never written to the store. */
  supplementalContext?: SupplementalContext[];
  /**
   * A compaction-only turn (manual `compact`): its operation, started in the
   * admission's commit so that however the turn ends, the operation has a record.
   */
  compaction?: { operationId: string; tokensBefore: number };
  retryOf?: { turnId: string; mode: "resume" | "regenerate" };
  /** Run labels (recorded on `turn_started` when there is at least one). */
  labels?: Readonly<Record<string, string>> | undefined;
  /** The queued input this turn takes: it leaves the queue in the same commit. */
  queueId?: string;
  /** What the same commit writes first, planned on the current record: the end of the turn before. */
  after?: (record: ThreadRecord) => { record: ThreadRecord; entries: NewEntry[] };
  /** The request record this command claims, given the new turn's id (a hand-over claims none). */
  claim?: (turnId: string) => { scope: string; key: string; value: RequestRecord };
}

/**
 * The admission of a queued input (promoted, or handed over to). Its
 * supplemental context, if this process still holds it, goes with it.
 */
export function queuedAdmission(item: QueuedItem, actor: ThreadActor): Admission {
  const admission: Admission = { requestKey: item.requestKey, input: item.input, queueId: item.id };
  if (item.labels) admission.labels = item.labels;
  const supplemental = actor.unstored.supplemental(item.id);
  if (supplemental) admission.supplementalContext = supplemental;
  return admission;
}

/**
 * Picks the ids of a new turn and resolves its agent; nothing is written.
 *
 * @throws {FloretError} `invalid_input` when the input has images the model does not take;
 *   whatever the agent factory throws
 */
export function prepareTurn(
  resolver: AgentResolver,
  threadId: string,
  input: AdmittedInput | undefined,
  known?: ThreadRecord,
): Promise<PreparedTurn> {
  try {
    const prepared = preparedNow(resolver, threadId, input, known);
    return prepared instanceof Promise ? prepared : Promise.resolve(prepared);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@link prepareTurn}, answered at once when the agent is known without
 * waiting (see {@link AgentResolver.agentNow}): an admission then goes on in
 * the same turn of the queue. Throws what `prepareTurn` rejects with.
 */
function preparedNow(
  resolver: AgentResolver,
  threadId: string,
  input: AdmittedInput | undefined,
  known: ThreadRecord | undefined,
): PreparedTurn | Promise<PreparedTurn> {
  const turnId = newId("turn");
  const runId = newId("run");
  const agent = known === undefined ? undefined : resolver.agentNow?.(known);
  if (agent !== undefined) return preparedWith(turnId, runId, agent, input);
  return resolver.resolveAgent(threadId, turnId, known).then((resolved) =>
    preparedWith(turnId, runId, resolved, input)
  );
}

/** The prepared turn, once its agent is known. */
function preparedWith(
  turnId: string,
  runId: string,
  agent: Agent,
  input: AdmittedInput | undefined,
): PreparedTurn {
  if (input?.attachments?.length && agent.gateway.info.capabilities?.images === false) {
    throw new FloretError(
      "invalid_input",
      `Model ${agent.gateway.info.model} does not accept images`,
    );
  }
  return { turnId, runId, agent };
}

/**
 * Admits a turn in one commit; the actor takes on its run, which the caller
 * then drives. Call inside the actor's lock, on an idle thread or from the
 * turn that hands over.
 *
 * @param resolver resolves the agent when `prepared` is not given
 * @param actor the thread
 * @param admission what the turn starts from
 * @param prepared ids and agent resolved beforehand
 * @returns the new run, now the actor's
 * @throws {StaleThreadError} when another writer got there first
 */
export async function admitTurn(
  resolver: AgentResolver,
  actor: ThreadActor,
  admission: Admission,
  prepared?: PreparedTurn,
): Promise<ActiveRun> {
  let ready = prepared ?? preparedNow(resolver, actor.threadId, admission.input, actor.record);
  if (ready instanceof Promise) ready = await ready;
  const { turnId, runId, agent } = ready;
  const started: NewEntry = {
    kind: "turn_started",
    turnId,
    runId,
    agentId: agent.id,
    requestKey: admission.requestKey,
  };
  if (admission.input) started.input = admission.input;
  if (admission.retryOf) started.retryOf = admission.retryOf;
  const labels = admission.labels;
  if (labels && Object.keys(labels).length > 0) started.labels = { ...labels };
  const before = admission.after?.(actor.record);
  const base = before?.record ?? actor.record;
  // A retry re-runs the latest turn under the surface that turn recorded (when it recorded one).
  const recorded = admission.retryOf ? await recordedSurface(actor.journal, base) : undefined;
  let surface: FingerprintedSurface | Promise<FingerprintedSurface> = recorded ??
    liveSurface(agent, base, resolver.equip);
  if (surface instanceof Promise) surface = await surface;
  started.surface = surface.fingerprint;
  const surfaceSet = surfaceWrites(base, surface);
  remember(actor.journal, surface);
  // The turn's first item comes after the view's settled items and those of the entries that
  // share this commit ahead of it (the last step of a turn that hands over).
  // (Nearly every admission has nothing before it: no empty list is made and spread for it.)
  started.ordinal = actor.view.settledCount + (before ? itemsMadeBy(before.entries) : 0);
  const entries: NewEntry[] = before ? [...before.entries, started] : [started];
  if (admission.compaction) {
    started.compaction = true;
    entries.push({
      kind: "compaction_started",
      turnId,
      runId,
      operationId: admission.compaction.operationId,
      trigger: "manual",
      tokensBefore: admission.compaction.tokensBefore,
    });
  }
  // The first accepted message brings the fallback title (and a title claim) in this commit.
  // The record comes back as a copy of its own: the turn's fields are set on it in place.
  const titled = firstMessageTitle(
    base,
    admission.input,
    agent,
    actor.ownership.hostId,
  );
  const record = titled.record;
  record.queue = admission.queueId === undefined
    ? record.queue
    : record.queue.filter((queued) => queued.id !== admission.queueId);
  record.status = "running";
  record.surface = surface.fingerprint;
  record.active = { turnId, runId };
  record.lastTurn = { turnId, retryable: !admission.compaction };
  record.updatedAt = nowIso();
  // A commit that lands in this tick (a synchronous store) is not awaited.
  const landed = actor.commitLanded({
    record,
    entries,
    // Made here for this commit alone, unless a hand-over's end comes first: stamped in place.
    fresh: before === undefined,
    // firstMessageTitle's copy, made for this commit.
    ownRecord: true,
    request: admission.claim?.(turnId),
    set: titled.claim === undefined
      ? surfaceSet
      : [{ key: keys.titlePending(actor.threadId), value: {} }, ...(surfaceSet ?? [])],
  });
  if (landed instanceof Promise) await landed;
  const run = new ActiveRun(
    turnId,
    runId,
    agent,
    admission.supplementalContext,
    admission.compaction?.operationId,
  );
  if (recorded) run.surface = recorded;
  if (admission.queueId !== undefined) actor.unstored.dropSupplemental(admission.queueId);
  actor.beginRun(run);
  if (titled.claim !== undefined && admission.input) {
    resolver.titleClaimed?.(actor.threadId, agent, admission.input, titled.claim);
  }
  return run;
}
