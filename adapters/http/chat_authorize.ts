/**
 * What the chat route does besides sending a message, for `authorize`: a
 * request whose last message is the assistant's carries the client's
 * answers (approval responses, `addToolOutput` answers to questions), which
 * the route turns into `respond` calls. A host that denies `respond` must
 * not see them go through `POST …/chat`.
 *
 * @module
 */
import type { ChatBody } from "./chat_request.ts";

/**
 * Whether a chat request answers interactions (and so is also a `respond`).
 * Any continuation of an assistant message counts, answered parts or not:
 * asking once too often is safe, once too few is not.
 *
 * @param body the parsed chat body
 * @returns `true` when the route may call `respond` for it
 */
export function chatAnswers(body: ChatBody): boolean {
  return body.messages.at(-1)?.role === "assistant";
}
