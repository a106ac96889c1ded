/**
 * The request body of the AI SDK's `DefaultChatTransport`
 * (`{ id, messages, trigger, messageId }`). Only what Floret reads is checked;
 * the transport's clients add fields of their own, so unknown fields pass.
 *
 * @module
 */
import { z } from "zod";
import { RequestRefused } from "./error_response.ts";

const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const message = z.looseObject({
  id: z.string(),
  role: z.string(),
  parts: z.array(part),
});

/** The fields of a chat request that Floret reads. */
export const chatBodySchema: z.ZodType<ChatBody> = z.looseObject({
  messages: z.array(message).min(1),
  trigger: z.string().optional(),
  messageId: z.string().optional(),
});

/** A chat request as Floret reads it. */
export interface ChatBody {
  messages: { id: string; role: string; parts: { type: string; text?: string }[] }[];
  /** `"submit-message"` (the default) or `"regenerate-message"`. */
  trigger?: string;
  /** With `regenerate-message`: the id of the assistant message to regenerate. */
  messageId?: string;
}

/**
 * The request key of a `regenerate-message` request: the `Idempotency-Key`,
 * else `regenerate:<messageId>` (the message regenerated, else the last
 * message), so posting the same regenerate again replays its turn.
 *
 * @param body the parsed body
 * @param headerKey the trimmed `Idempotency-Key`, if sent
 * @returns the key, or `undefined` when the request is no regenerate
 * @throws {RequestRefused} `invalid_input` when the key would be empty or too long
 */
export function regenerateKey(body: ChatBody, headerKey: string | undefined): string | undefined {
  if (body.trigger !== "regenerate-message") return undefined;
  if (headerKey !== undefined) return headerKey;
  const messageId = (body.messageId ?? body.messages.at(-1)?.id ?? "").trim();
  const key = `regenerate:${messageId}`;
  if (messageId === "" || key.length > 256) {
    throw new RequestRefused("invalid_input", "the message id must hold 1 to 245 characters");
  }
  return key;
}

const approvalPart = z.looseObject({
  state: z.literal("approval-responded"),
  approval: z.looseObject({ id: z.string().min(1).max(256), approved: z.boolean() }),
});

/** A decision `useChat` sent back with `addToolApprovalResponse`. */
export interface ChatApproval {
  interactionId: string;
  decision: "approve" | "deny";
}

/**
 * The approvals answered in a chat request: tool parts of the last message,
 * when it is the assistant's, in state `approval-responded` (the AI SDK's
 * `addToolApprovalResponse`; the approval id is the interaction id Floret
 * sent in `tool-approval-request`).
 *
 * @param body the parsed body
 * @returns the decisions, in part order; empty for an ordinary new message
 */
export function chatApprovals(body: ChatBody): ChatApproval[] {
  const last = body.messages.at(-1);
  if (last?.role !== "assistant") return [];
  const out: ChatApproval[] = [];
  for (const part of last.parts) {
    const parsed = approvalPart.safeParse(part);
    if (!parsed.success) continue;
    const { id, approved } = parsed.data.approval;
    out.push({ interactionId: id, decision: approved ? "approve" : "deny" });
  }
  return out;
}

/**
 * The input of a chat request: the last user message's text parts, joined
 * with a line break, and the request key (the `Idempotency-Key`, else that
 * message's id).
 *
 * @param body the parsed body
 * @param headerKey the trimmed `Idempotency-Key`, if sent
 * @returns the text to send and its request key
 * @throws {RequestRefused} `invalid_input` when there is no user text or no usable key
 */
export function chatInput(
  body: ChatBody,
  headerKey: string | undefined,
): { text: string; requestKey: string } {
  const last = body.messages.findLast((m) => m.role === "user");
  if (!last) throw new RequestRefused("invalid_input", "no user message");
  const text = last.parts.filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text).join("\n");
  if (text.trim() === "") throw new RequestRefused("invalid_input", "the user message has no text");
  const requestKey = headerKey ?? last.id.trim();
  if (requestKey === "" || requestKey.length > 256) {
    throw new RequestRefused("invalid_input", "the message id must hold 1 to 256 characters");
  }
  return { text, requestKey };
}
