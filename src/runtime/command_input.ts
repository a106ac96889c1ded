/**
 * Validation of command inputs with zod, before any I/O. A rejected command
 * never consumes its request key.
 *
 * @module
 */
import { z } from "zod";
import { FloretError } from "../errors.ts";
import { MAX_REQUEST_KEY_LENGTH } from "../identity/request_key.ts";
import type { ImageAttachment } from "../provider/gateway.ts";

const requestKey = z.string().trim().min(1, "Request key is empty").max(
  MAX_REQUEST_KEY_LENGTH,
  `Request key is longer than ${MAX_REQUEST_KEY_LENGTH} characters`,
);
const threadId = z.string();

/** An image attachment: the schema of {@link ImageAttachment}, which it must match. */
export const imageAttachmentSchema: z.ZodType<ImageAttachment> = z.object({
  type: z.literal("image"),
  mediaType: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  dataBase64: z.string().min(1).regex(
    /^[A-Za-z0-9+/]+={0,2}$/,
    "dataBase64 must be standard base64",
  ),
  name: z.string().max(256).optional(),
}).strict();

const userInput = z.object({
  text: z.string().max(1_000_000),
  attachments: z.array(imageAttachmentSchema).max(32).optional(),
}).refine((input) => input.text.trim() !== "" || (input.attachments?.length ?? 0) > 0, {
  message: "Input needs text or an attachment",
});

/** Schemas of every command. */
export const commandSchemas = {
  create: z.object({ requestKey, title: z.string().max(500).optional() }),
  send: z.object({
    threadId,
    requestKey,
    input: userInput,
    supplementalContext: z.array(
      z.object({ title: z.string().max(500), text: z.string().max(200_000) }),
    ).max(16)
      .optional(),
  }),
  respond: z.object({
    threadId,
    requestKey,
    interactionId: z.string().min(1),
    decision: z.enum(["approve", "deny"]).optional(),
    answers: z.array(z.object({ questionId: z.string(), value: z.string() }).strict()).max(100)
      .optional(),
  }),
  cancel: z.object({
    threadId,
    requestKey,
    mode: z.enum(["immediate", "graceful"]).optional(),
    includeDescendants: z.boolean().optional(),
  }),
  steer: z.object({ threadId, requestKey, text: z.string().trim().min(1).max(1_000_000) }),
  editQueued: z.object({
    threadId,
    requestKey,
    queueId: z.string().min(1),
    text: z.string().max(1_000_000).refine((text) => text.trim() !== "", "Text is empty"),
    expectedText: z.string(),
  }),
  retry: z.object({ threadId, requestKey, turnId: z.string().optional() }),
  fork: z.object({ threadId, requestKey, atItemId: z.string().optional() }),
  delete: z.object({ threadId, requestKey }),
  setTitle: z.object({ threadId, requestKey, title: z.string().trim().min(1).max(500) }),
  queueItem: z.object({ threadId, requestKey, queueId: z.string().min(1) }),
  compact: z.object({ threadId, requestKey }),
};

/**
 * Parses a command input.
 *
 * @throws {FloretError} `invalid_input` listing every problem (or `thread_not_found` for a bad thread id)
 */
export function parseCommand<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  // Any thread id that names no thread is thread_not_found, whatever its shape.
  if (parsed.error.issues.every((issue) => issue.path[0] === "threadId")) {
    throw new FloretError(
      "thread_not_found",
      `Thread not found: ${String((input as { threadId?: unknown })?.threadId)}`,
    );
  }
  throw new FloretError("invalid_input", `Invalid input: ${z.prettifyError(parsed.error)}`);
}
