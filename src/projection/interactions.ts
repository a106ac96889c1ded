/**
 * The interactions of a thread's path: approvals and questions, pending or
 * resolved, folded from `interaction_opened` / `interaction_resolved`
 * entries. A turn that ends closes whatever it left pending (a cancel writes
 * the resolution itself; a fork's cut or an old journal may not).
 *
 * @module
 */
import type {
  Entry,
  InteractionOpenedEntry,
  InteractionResolution,
  StoredQuestion,
} from "../journal/entries.ts";
import type { Interaction, Question } from "./view/view_types.ts";

/** One interaction as the engine tracks it. */
export interface InteractionState {
  id: string;
  kind: "approval" | "input";
  turnId: string;
  /** The run whose step or result opened it. */
  runId: string;
  callId?: string;
  toolName?: string;
  questions?: StoredQuestion[];
  reaskOf?: string;
  /** ISO time it was opened (turn timing counts waiting from here). */
  openedAt: string;
  resolution?: InteractionResolution;
  resolvedAt?: string;
  /** The run that carries on with the answer. */
  resolvedForRun?: string;
  /** Journal position of the resolution (orders it against other resolutions of the turn). */
  resolvedSeq?: number;
}

/** What readers of the interactions may use. */
export type InteractionsReader = Pick<
  Interactions,
  "get" | "pending" | "pendingOf" | "ofCall" | "all"
>;

/** Every interaction of the path, by id. */
export class Interactions {
  // Made at the first interaction: most threads never open one, and an idle
  // cached actor should not keep two empty maps for them.
  #byId: Map<string, InteractionState> | undefined;
  #byCall: Map<string, InteractionState> | undefined;

  /** Applies one committed entry. */
  apply(entry: Entry): void {
    switch (entry.kind) {
      case "interaction_opened":
        return this.#opened(entry);
      case "interaction_resolved": {
        const state = this.#byId?.get(entry.interactionId);
        if (!state) return;
        state.resolution = entry.resolution;
        state.resolvedAt = entry.at;
        state.resolvedSeq = entry.seq;
        if (entry.runId) state.resolvedForRun = entry.runId;
        return;
      }
      case "turn_ended":
        if (!this.#byId) return;
        for (const state of this.#byId.values()) {
          if (state.turnId === entry.turnId && !state.resolution) {
            state.resolution = { type: "cancelled" };
            state.resolvedAt = entry.at;
          }
        }
        return;
      default:
        return;
    }
  }

  /** An interaction by id. */
  get(id: string): InteractionState | undefined {
    return this.#byId?.get(id);
  }

  /** The interaction a call of a turn waits for (its latest), if any. Providers may reuse call ids across turns. */
  ofCall(turnId: string, callId: string): InteractionState | undefined {
    return this.#byCall?.get(`${turnId}|${callId}`);
  }

  /** Every pending interaction, oldest first. */
  pending(): InteractionState[] {
    return this.all().filter((state) => !state.resolution);
  }

  /** The pending interactions of one turn. */
  pendingOf(turnId: string): InteractionState[] {
    return this.pending().filter((state) => state.turnId === turnId);
  }

  /** Every interaction, oldest first. */
  all(): InteractionState[] {
    return this.#byId ? [...this.#byId.values()] : [];
  }

  #opened(entry: InteractionOpenedEntry): void {
    const state: InteractionState = {
      id: entry.interactionId,
      kind: entry.interaction,
      turnId: entry.turnId,
      runId: entry.runId,
      openedAt: entry.at,
    };
    if (entry.callId !== undefined) state.callId = entry.callId;
    if (entry.toolName !== undefined) state.toolName = entry.toolName;
    if (entry.questions) state.questions = entry.questions;
    if (entry.reaskOf) state.reaskOf = entry.reaskOf;
    (this.#byId ??= new Map()).set(state.id, state);
    if (state.callId !== undefined) {
      (this.#byCall ??= new Map()).set(`${state.turnId}|${state.callId}`, state);
    }
  }
}

/** The host-facing shape of an interaction. */
export function publicInteraction(state: InteractionState): Interaction {
  const status = state.resolution ? "resolved" : "pending";
  let out: Interaction;
  if (state.kind === "approval") {
    // Approvals are always opened for a call (interaction_plan.ts); "" only for a damaged entry.
    out = {
      id: state.id,
      kind: "approval",
      status,
      turnId: state.turnId,
      callId: state.callId ?? "",
      toolName: state.toolName ?? "",
    };
  } else {
    // Keys in the order views have always had them (callId, toolName, questions).
    out = {
      id: state.id,
      kind: "input",
      status,
      turnId: state.turnId,
      ...(state.callId !== undefined ? { callId: state.callId } : {}),
      ...(state.toolName !== undefined ? { toolName: state.toolName } : {}),
      // Options too: hosts own what they receive, and the state keeps its questions.
      questions: (state.questions ?? []).map(publicQuestion),
    };
  }
  if (state.resolution) out.resolution = publicResolution(state.resolution);
  out.createdAt = state.openedAt;
  if (state.resolvedAt) out.resolvedAt = state.resolvedAt;
  return out;
}

function publicQuestion(question: Question): Question {
  const copy = { ...question };
  if (copy.options) {
    copy.options = copy.options.map((entry) => typeof entry === "string" ? entry : { ...entry });
  }
  return copy;
}

function publicResolution(resolution: InteractionResolution): Interaction["resolution"] {
  switch (resolution.type) {
    case "decision":
      return { decision: resolution.decision };
    case "answers":
      return {
        answers: resolution.answers.map((answer) => ({ ...answer })),
        redacted: [...resolution.redacted],
      };
    case "cancelled":
      return { cancelled: true };
    default: {
      const never: never = resolution;
      throw new Error(`Unhandled resolution ${String(never)}`);
    }
  }
}
