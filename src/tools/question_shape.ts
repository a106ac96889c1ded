/**
 * The shape of a question put to the user (`ask_user`, or a tool's
 * `inputRequired`): a prompt with an optional header, placeholder, reason
 * and options, each option a value or a value with a description.
 * `exhaustive` (default true when options are given) accepts only listed
 * values; `exhaustive: false` makes the options suggestions.
 *
 * @module
 */
import { z } from "zod";

/** One option of a question: a value, or a value with a description. */
export type QuestionOption = string | { value: string; description?: string };

/** A question as the model (or a tool) asks it and as it is stored. */
export interface Question {
  /** Unique among the questions of one interaction; answers name it. */
  id: string;
  /** What the user is asked. */
  prompt: string;
  /** The answer is a secret: stored only as a redaction marker, asked again after a restart. */
  secret?: boolean;
  /** A short title above the question. */
  header?: string;
  /** Hint text for an empty answer field. */
  placeholder?: string;
  /** Why the model asks. */
  reason?: string;
  /** Values the user may pick (see `exhaustive`). */
  options?: QuestionOption[];
  /** Only listed options are accepted (default true when `options` are given). */
  exhaustive?: boolean;
}

const option = z.union([
  z.string().min(1).max(500),
  z.object({
    value: z.string().min(1).max(500),
    description: z.string().max(1_000).optional(),
  }).strict(),
]);

/** The zod schema of one question. */
export const questionSchema: z.ZodType<Question> = z.object({
  id: z.string().trim().min(1).max(64),
  prompt: z.string().trim().min(1).max(4_000),
  options: z.array(option).min(1).max(50).optional(),
  secret: z.boolean().optional(),
  header: z.string().max(200).optional(),
  placeholder: z.string().max(500).optional(),
  reason: z.string().max(2_000).optional(),
  exhaustive: z.boolean().optional(),
}).strict();

/** The values a question's options allow. */
export function optionValues(question: Pick<Question, "options">): string[] {
  return (question.options ?? []).map((entry) => typeof entry === "string" ? entry : entry.value);
}

/** Whether only the listed options are accepted as an answer. */
export function isExhaustive(question: Pick<Question, "options" | "exhaustive">): boolean {
  return question.options !== undefined && question.options.length > 0 &&
    question.exhaustive !== false;
}

/** A deep copy of a question (hosts own what they receive). */
export function copyQuestion<Q extends Question>(question: Q): Q {
  const copy = { ...question };
  if (copy.options) {
    copy.options = copy.options.map((entry) => typeof entry === "string" ? entry : { ...entry });
  }
  return copy;
}
