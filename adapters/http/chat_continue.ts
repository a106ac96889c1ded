/**
 * A chat request that continues a waiting turn: its last message is the
 * assistant's, carrying what `useChat` added to it — approval responses
 * (`addToolApprovalResponse`) and `ask_user` outputs (`addToolOutput`). Each
 * becomes a `respond`; the stream then carries the rest of that turn, with
 * what the client already has (the view before the answers) taken as written.
 *
 * Each answer's request key is the interaction id (under the
 * `Idempotency-Key`, when sent), so posting the same continuation again
 * replays it; the same approval answered the other way is `request_conflict`.
 *
 * @module
 */
import {
  FloretError,
  type Interaction,
  isFloretError,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { answersOf, type ChatToolAnswer } from "./chat_answers.ts";
import type { ChatApproval } from "./chat_request.ts";
import { TurnChunks } from "./chat_stream.ts";

/** A continuation the chat should show as an error chunk (not an HTTP error). */
export class ChatRefusal extends Error {
  /**
   * @param code the code the error chunk names
   * @param detail server-written text
   */
  constructor(readonly code: string, readonly detail: string) {
    super(detail);
    this.name = "ChatRefusal";
  }
}

/**
 * Answers the approvals and questions of a continued chat.
 *
 * @param service the thread service
 * @param threadId the thread
 * @param continued the approvals and `ask_user` outputs of the last message
 * @param headerKey the `Idempotency-Key`, if sent
 * @returns the chunk writer of the continued turn
 * @throws {FloretError} `interaction_not_found` for an approval or question
 *   Floret never asked; `request_conflict` for one answered otherwise before
 * @throws {ChatRefusal} `invalid_input` for answers that do not fit the questions
 */
export async function continueTurn(
  service: ThreadService,
  threadId: string,
  continued: { approvals: ChatApproval[]; answers: ChatToolAnswer[] },
  headerKey: string | undefined,
): Promise<TurnChunks> {
  const before = await service.view(threadId);
  const questions = continued.answers.map((a) => ({ ...a, interaction: questionOf(before, a) }));
  const first = continued.approvals[0]?.interactionId ?? questions[0]?.interaction.id;
  const turnId = interactionOf(before, (i) => i.id === first)?.turnId;
  if (turnId === undefined) throw new FloretError("interaction_not_found", "No such interaction");
  const keyOf = (interactionId: string) =>
    (headerKey === undefined ? interactionId : `${headerKey}:${interactionId}`).slice(0, 256);
  for (const { interactionId, decision } of continued.approvals) {
    await service.respond({ threadId, requestKey: keyOf(interactionId), interactionId, decision });
  }
  for (const { interaction, output } of questions) {
    const answers = answersOf(output);
    if (answers === undefined) {
      throw new ChatRefusal(
        "invalid_input",
        `the ask_user output must be { answers: [{ questionId, value }] } or { [questionId]: value }`,
      );
    }
    try {
      await service.respond({
        threadId,
        requestKey: keyOf(interaction.id),
        interactionId: interaction.id,
        answers,
      });
    } catch (error) {
      // The engine's message may quote the questions: the chat gets the server's own words.
      if (isFloretError(error) && error.code === "invalid_input") {
        throw new ChatRefusal(
          "invalid_input",
          `the answers do not fit the questions of ${interaction.id} (every question once, ` +
            `a listed option where the question has options)`,
        );
      }
      throw error;
    }
  }
  const chunks = new TurnChunks(turnId);
  chunks.skip(before);
  chunks.answered(continued.answers.map((a) => a.toolCallId));
  return chunks;
}

/** The `input` interaction a tool part answers (by call id, else interaction id). */
function questionOf(view: ThreadView, answer: ChatToolAnswer): Interaction {
  const found = interactionOf(
    view,
    (i) => i.kind === "input" && (i.callId ?? i.id) === answer.toolCallId,
  );
  if (!found) throw new FloretError("interaction_not_found", "No such question");
  return found;
}

/** A pending interaction, else one the view's items show. */
function interactionOf(
  view: ThreadView,
  match: (interaction: Interaction) => boolean,
): Interaction | undefined {
  return view.pending.find(match) ??
    view.items.find((item) => item.interaction !== undefined && match(item.interaction))
      ?.interaction;
}
