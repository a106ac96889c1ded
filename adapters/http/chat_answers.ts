/**
 * Answers to `ask_user` questions, as the AI SDK sends them: the chat shows a
 * question set as a tool part (`tool-ask_user`, its input the questions), and
 * `addToolOutput({ toolCallId, output })` puts the user's answers into that
 * part, which the next request carries in its last (assistant) message. This
 * module finds those parts and reads their output as `respond` answers.
 *
 * @module
 */
import { z } from "zod";
import type { ChatBody } from "./chat_request.ts";

/** The name of the built-in question tool, and of its tool part (`tool-ask_user`). */
export const ASK_USER = "ask_user";

/** One tool output `addToolOutput` put on an `ask_user` part. */
export interface ChatToolAnswer {
  /** The part's tool call id: the question's call id (or its interaction id). */
  toolCallId: string;
  /** The output as the client sent it; read with {@link answersOf}. */
  output: unknown;
}

const answeredPart = z.looseObject({
  type: z.string(),
  toolName: z.string().optional(),
  toolCallId: z.string().min(1).max(256),
  // `output-error` (`addToolOutput({ state: "output-error" })`) carries no
  // answers: it is refused as one, rather than read as no continuation at all.
  state: z.enum(["output-available", "output-error"]),
  output: z.unknown().optional(),
});

/**
 * The `ask_user` parts of the request's last message, when it is the
 * assistant's, that carry an output (static `tool-ask_user` parts, or dynamic
 * ones named `ask_user`), an error output included (it has no answers).
 *
 * @param body the parsed body
 * @returns the outputs, in part order; empty for an ordinary new message
 */
export function chatToolAnswers(body: ChatBody): ChatToolAnswer[] {
  const last = body.messages.at(-1);
  if (last?.role !== "assistant") return [];
  const out: ChatToolAnswer[] = [];
  for (const part of last.parts) {
    const parsed = answeredPart.safeParse(part);
    if (!parsed.success) continue;
    const { type, toolName, toolCallId, output } = parsed.data;
    const named = type === `tool-${ASK_USER}` || (type === "dynamic-tool" && toolName === ASK_USER);
    if (named) out.push({ toolCallId, output });
  }
  return out;
}

const answerList = z.array(z.strictObject({ questionId: z.string(), value: z.string() }));
const answerRecord = z.record(z.string(), z.string());

/**
 * Reads an `ask_user` output as answers. Accepted shapes, the first two as
 * `respond` takes them: `{ answers: [{ questionId, value }] }`,
 * `[{ questionId, value }]`, `{ answers: { [questionId]: value } }` and
 * `{ [questionId]: value }`. Whether the answers fit the questions (every
 * question answered, an allowed option) is `respond`'s to say.
 *
 * @param output the tool output the client sent
 * @returns the answers, or `undefined` when the output has none of these shapes
 */
export function answersOf(output: unknown): { questionId: string; value: string }[] | undefined {
  const inner = typeof output === "object" && output !== null && !Array.isArray(output) &&
      "answers" in output
    ? (output as { answers: unknown }).answers
    : output;
  const list = answerList.safeParse(inner);
  if (list.success) return list.data;
  const record = answerRecord.safeParse(inner);
  if (record.success) {
    return Object.entries(record.data).map(([questionId, value]) => ({ questionId, value }));
  }
  return undefined;
}
