/**
 * The canonical user message that carries a user's answers to the model,
 * and the `ask_user` tool result that announces it. Secret answers appear as
 * a redaction marker; only the run that `respond` resumed renders them with
 * their values, in memory.
 *
 * @module
 */
import type { StoredQuestion } from "../../journal/entries.ts";

/** What stands in for a secret answer everywhere except the resumed run's requests. */
export const REDACTED = "[secret answer redacted]";

/**
 * The answers message.
 *
 * @param questions the interaction's questions, in order
 * @param answers answers by question id (secret ones only when `secrets` renders them)
 * @param secrets secret values by question id; absent: redaction markers
 * @returns the message text
 */
export function answersText(
  questions: readonly StoredQuestion[],
  answers: ReadonlyMap<string, string>,
  secrets?: ReadonlyMap<string, string>,
): string {
  const lines = questions.map((question) => {
    const value = question.secret
      ? secrets?.get(question.id) ?? REDACTED
      : answers.get(question.id) ?? "";
    return `- ${question.prompt} (${question.id}): ${value}`;
  });
  return `The user answered:\n${lines.join("\n")}`;
}

/**
 * The `ask_user` call's tool result.
 *
 * @param redacted ids of secret questions
 * @returns the output the model sees
 */
export function askUserOutput(redacted: readonly string[]): string {
  const secret = redacted.length > 0
    ? ` Secret answers (${redacted.join(", ")}) are shown as ${REDACTED} in the record.`
    : "";
  return `The user answered; the answers follow as a user message.${secret}`;
}
