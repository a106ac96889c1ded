/**
 * A thread's goal: one clear objective the model keeps, reviews with
 * evidence and completes. It lives on the thread record, so every change is
 * one versioned commit, survives restarts and is copied by a fork.
 *
 * @module
 */
import { FloretError } from "../errors.ts";

/** Longest goal text, in characters. */
export const MAX_GOAL_TEXT = 10_000;
/** Longest review evidence, in characters. */
export const MAX_GOAL_EVIDENCE = 10_000;
/** Reflection prompts per turn at most (a turn about to end with an unreviewed goal). */
export const MAX_GOAL_REFLECTIONS = 3;

/** The goal as hosts see it (`view.goal`). */
export interface Goal {
  /** What the agent works towards, as set. */
  text: string;
  /** `completed` once a review accepted the evidence. */
  status: "active" | "completed";
  /** Grows with every `set`; a review leaves it as it is. */
  version: number;
  /** The last review: the evidence given and when (ISO time). */
  review?: { evidence: string; at: string };
}

/** The goal as the thread record keeps it: the public goal and the turn of its review. */
export interface StoredGoal extends Goal {
  /** The turn that wrote the review (`complete` needs a review of its own turn). */
  reviewTurnId?: string;
}

/** A copy of a stored goal for hosts, without engine bookkeeping. */
export function publicGoal(goal: StoredGoal): Goal {
  const view: Goal = { text: goal.text, status: goal.status, version: goal.version };
  if (goal.review) view.review = { evidence: goal.review.evidence, at: goal.review.at };
  return view;
}

/**
 * The goal after `set`: active, the next version, no review (a review of an
 * older version says nothing about this one).
 *
 * @throws {FloretError} `invalid_input` for an empty or too long text
 */
export function goalSet(previous: StoredGoal | undefined, text: string): StoredGoal {
  const trimmed = checkedText(text, MAX_GOAL_TEXT, "Goal text");
  return { text: trimmed, status: "active", version: (previous?.version ?? 0) + 1 };
}

/**
 * The goal after a review with evidence; the version stays.
 *
 * @returns the goal, or a refusal the model reads
 */
export function goalReviewed(
  goal: StoredGoal | undefined,
  evidence: string,
  turnId: string,
  at: string,
): StoredGoal | string {
  if (!goal || goal.status !== "active") return "There is no active goal to review.";
  const text = evidence.trim();
  if (text === "") return "A review needs evidence: say what shows the goal's progress.";
  if (text.length > MAX_GOAL_EVIDENCE) {
    return `Review evidence is limited to ${MAX_GOAL_EVIDENCE} characters.`;
  }
  return { ...goal, review: { evidence: text, at }, reviewTurnId: turnId };
}

/**
 * The goal after `complete`: only with a review written in the same turn.
 *
 * @returns the goal, or a refusal the model reads
 */
export function goalCompleted(goal: StoredGoal | undefined, turnId: string): StoredGoal | string {
  if (!goal || goal.status !== "active") return "There is no active goal to complete.";
  if (!goal.review || goal.reviewTurnId !== turnId) {
    return "Completing the goal needs a review with evidence in this turn first " +
      '(call goal with action "review").';
  }
  return { ...goal, status: "completed" };
}

/** Whether a turn about to end should be asked to reflect on its goal. */
export function needsReflection(goal: StoredGoal | undefined): boolean {
  return goal !== undefined && goal.status === "active" && goal.review === undefined;
}

/** The goal as the model reads it in each request (engine state, not a user instruction). */
export function goalNoteText(goal: StoredGoal): string {
  const lines = [
    `Status: ${goal.status} (version ${goal.version})`,
    `Objective: ${goal.text}`,
  ];
  if (goal.review) lines.push(`Latest review: ${goal.review.evidence}`);
  if (goal.status === "active") {
    lines.push(
      'Work toward it. Before stopping, call the goal tool with action "review" and the ' +
        'evidence of progress; call it with action "complete" once reviewed evidence shows it is done.',
    );
  }
  return lines.join("\n");
}

/** The runtime note of a reflection prompt. */
export const REFLECTION_NOTE = "[Runtime note] The thread goal is still active and has not been " +
  "reviewed since it was set. Before ending, review your progress with the goal tool " +
  '(action "review", with evidence), complete it if the evidence shows it is done, or keep working.';

function checkedText(text: string, max: number, what: string): string {
  const trimmed = typeof text === "string" ? text.trim() : "";
  if (trimmed === "") throw new FloretError("invalid_input", `${what} is empty`);
  if (trimmed.length > max) {
    throw new FloretError("invalid_input", `${what} is longer than ${max} characters`);
  }
  return trimmed;
}

/** The runtime note that starts the work of a `compact({ continueGoal: true })` turn. */
export const CONTINUE_NOTE = "[Runtime note] The context was compacted. Continue working on the " +
  "active thread goal.";
