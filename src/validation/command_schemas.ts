/**
 * Schemas of every ThreadService input, checked before any I/O. A command
 * rejected here never consumes its request key. The HTTP layer reuses these
 * schemas for its request bodies, so both entries accept exactly the same
 * inputs.
 *
 * @module
 */
import { z } from "zod";
import { MAX_REQUEST_KEY_LENGTH } from "../identity/request_key.ts";
import type { ImageAttachment } from "../provider/gateway.ts";
import { isWellFormed } from "./parse_input.ts";
import {
  type InputContextItem,
  inputContextSchema,
  type InputReference,
  inputReferencesSchema,
  runLabelsSchema,
} from "./turn_input_schemas.ts";

/** A request key: trimmed, 1–256 characters, well-formed UTF-16. */
export const requestKeySchema: z.ZodType<string> = z.string().trim()
  .min(1, "Request key is empty")
  .max(MAX_REQUEST_KEY_LENGTH, `Request key is longer than ${MAX_REQUEST_KEY_LENGTH} characters`)
  .refine(isWellFormed, "Request key has a lone surrogate");

/** A thread id: any string (one that names no thread is `thread_not_found`, later). */
export const threadIdSchema: z.ZodType<string> = z.string().refine(isWellFormed);

/**
 * A tenant (what `threadApi`'s `authorize` returned as `{ tenant }`): 1–256
 * well-formed characters. A thread created for a tenant belongs to it.
 */
export const tenantSchema: z.ZodType<string> = z.string().min(1, "Tenant is empty")
  .max(256, "Tenant is longer than 256 characters").refine(
    isWellFormed,
    "Tenant has a lone surrogate",
  );

/** An id chosen by the engine (turn, queue item, interaction, item): a short, well-formed string. */
const engineId = z.string().min(1).max(256).refine(isWellFormed, "Id has a lone surrogate");

/** An image attachment: the schema of {@link ImageAttachment}, which it must match. */
export const imageAttachmentSchema: z.ZodType<ImageAttachment> = z.object({
  type: z.literal("image"),
  mediaType: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  dataBase64: z.string().min(1).regex(
    /^[A-Za-z0-9+/]+={0,2}$/,
    "dataBase64 must be standard base64",
  ),
  name: z.string().max(256).optional(),
}).strict().refine(
  (image) => bytesMatch(image.mediaType, image.dataBase64),
  "The attachment's bytes are not the declared media type",
);

/** The first bytes of each image type (DESIGN §11: bytes must match the declared type). */
function bytesMatch(mediaType: string, dataBase64: string): boolean {
  let head: string;
  try {
    // 16 base64 characters are 12 bytes: enough for every signature below.
    head = atob(dataBase64.slice(0, 16));
  } catch {
    return false;
  }
  switch (mediaType) {
    case "image/png":
      return head.startsWith("\x89PNG");
    case "image/jpeg":
      return head.startsWith("\xff\xd8\xff");
    case "image/gif":
      return head.startsWith("GIF8");
    case "image/webp":
      return head.startsWith("RIFF") && (head.length < 12 || head.slice(8, 12) === "WEBP");
    default:
      return false;
  }
}

/** A user's input: text, optional images, references and context items. */
export interface UserInputInput {
  text: string;
  attachments?: ImageAttachment[];
  references?: InputReference[];
  context?: InputContextItem[];
}

/** The longest text of a user's input, in UTF-16 code units. */
export const MAX_INPUT_TEXT_LENGTH = 1_000_000;

/** A user's input: text, images or references (at least one), and context items. */
export const userInputSchema: z.ZodType<UserInputInput> = z.strictObject({
  text: z.string().max(MAX_INPUT_TEXT_LENGTH),
  attachments: z.array(imageAttachmentSchema).max(32).optional(),
  references: inputReferencesSchema.optional(),
  context: inputContextSchema.optional(),
}).refine(
  (input) =>
    input.text.trim() !== "" || (input.attachments?.length ?? 0) > 0 ||
    (input.references?.length ?? 0) > 0,
  { message: "Input needs text, an attachment or a reference" },
);

/** `create` input. */
export interface CreateCommand {
  requestKey: string;
  title?: string;
  /** The tenant the new thread belongs to; its request key is scoped to that tenant. */
  tenant?: string;
}
/** `send` input. */
export interface SendCommand {
  threadId: string;
  requestKey: string;
  input: UserInputInput;
  supplementalContext?: { title: string; text: string }[];
  /** Run labels: they reach tools, permission checks, provider requests and observations. */
  labels?: Record<string, string>;
}
/** `respond` input. */
export interface RespondCommand {
  threadId: string;
  requestKey: string;
  interactionId: string;
  decision?: "approve" | "deny";
  answers?: { questionId: string; value: string }[];
}
/** `cancel` input. */
export interface CancelCommand {
  threadId: string;
  requestKey: string;
  mode?: "immediate" | "graceful";
  /** Also stop every descendant (child threads, their children, ...). */
  includeDescendants?: boolean;
}
/** `steer` input: text added to the running (or waiting) turn. */
export interface SteerCommand {
  threadId: string;
  requestKey: string;
  text: string;
}
/** `editQueued` input: new text for queued input that still reads `expectedText`. */
export interface EditQueuedCommand {
  threadId: string;
  requestKey: string;
  queueId: string;
  text: string;
  expectedText: string;
}
/** `retry` input. */
export interface RetryCommand {
  threadId: string;
  requestKey: string;
  turnId?: string;
}
/** `fork` input. */
export interface ForkCommand {
  threadId: string;
  requestKey: string;
  atItemId?: string;
}
/** Input of commands that name only the thread (`delete`, `compact`). */
export interface ThreadKeyCommand {
  threadId: string;
  requestKey: string;
}
/** `setTitle` input. */
export interface SetTitleCommand {
  threadId: string;
  requestKey: string;
  title: string;
}
/** `promoteQueued` and `deleteQueued` input. */
export interface QueueItemCommand {
  threadId: string;
  requestKey: string;
  queueId: string;
}

/** The schema of every command, by name. */
export interface CommandSchemas {
  create: z.ZodType<CreateCommand>;
  send: z.ZodType<SendCommand>;
  respond: z.ZodType<RespondCommand>;
  cancel: z.ZodType<CancelCommand>;
  steer: z.ZodType<SteerCommand>;
  editQueued: z.ZodType<EditQueuedCommand>;
  retry: z.ZodType<RetryCommand>;
  fork: z.ZodType<ForkCommand>;
  delete: z.ZodType<ThreadKeyCommand>;
  setTitle: z.ZodType<SetTitleCommand>;
  queueItem: z.ZodType<QueueItemCommand>;
  compact: z.ZodType<ThreadKeyCommand>;
}

const threadKey = { threadId: threadIdSchema, requestKey: requestKeySchema };

/** Schemas of every command. */
export const commandSchemas: CommandSchemas = {
  create: z.strictObject({
    requestKey: requestKeySchema,
    title: z.string().max(500).refine(isWellFormed, "Title has a lone surrogate").optional(),
    tenant: tenantSchema.optional(),
  }),
  send: z.strictObject({
    ...threadKey,
    input: userInputSchema,
    supplementalContext: z.array(
      z.strictObject({ title: z.string().max(500), text: z.string().max(200_000) }),
    ).max(16).optional(),
    labels: runLabelsSchema.optional(),
  }),
  respond: z.strictObject({
    ...threadKey,
    interactionId: engineId,
    decision: z.enum(["approve", "deny"]).optional(),
    answers: z.array(z.strictObject({ questionId: z.string(), value: z.string() }).strict()).max(
      100,
    )
      .optional(),
  }),
  cancel: z.strictObject({
    ...threadKey,
    mode: z.enum(["immediate", "graceful"]).optional(),
    includeDescendants: z.boolean().optional(),
  }),
  steer: z.strictObject({
    ...threadKey,
    text: z.string().trim().min(1).max(1_000_000).refine(isWellFormed, "Text has a lone surrogate"),
  }),
  editQueued: z.strictObject({
    ...threadKey,
    queueId: engineId,
    text: z.string().max(1_000_000).refine((text) => text.trim() !== "", "Text is empty")
      .refine(isWellFormed, "Text has a lone surrogate"),
    expectedText: z.string(),
  }),
  retry: z.strictObject({ ...threadKey, turnId: engineId.optional() }),
  fork: z.strictObject({ ...threadKey, atItemId: engineId.optional() }),
  delete: z.strictObject(threadKey),
  setTitle: z.strictObject({
    ...threadKey,
    title: z.string().trim().min(1).max(500).refine(isWellFormed, "Title has a lone surrogate"),
  }),
  queueItem: z.strictObject({ ...threadKey, queueId: engineId }),
  compact: z.strictObject(threadKey),
};

/** `list` options. */
export interface ListOptions {
  limit?: number;
  cursor?: string;
  /**
   * List this thread's children instead of root threads. Any value passes
   * the schema: the service checks it as a thread id, so one that names no
   * thread is `thread_not_found`, like every other thread id.
   */
  parentThreadId?: unknown;
  /** Only this tenant's threads (without it: every thread). */
  tenant?: string;
}
/** `history` options. */
export interface HistoryOptions {
  limit?: number;
  before?: string;
}
/** `waitForIdle` options. */
export interface WaitOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}
/** `subscribe` options (and any other that only takes a signal). */
export interface SignalOptions {
  signal?: AbortSignal;
}

const signalSchema = z.custom<AbortSignal>(
  (value) => typeof AbortSignal !== "undefined" && value instanceof AbortSignal,
  "signal must be an AbortSignal",
);
const pageLimit = z.number().int().min(1).max(500);

/** The options of queries; each may be omitted, but `null` or a wrong type is `invalid_input`. */
export interface QuerySchemas {
  list: z.ZodType<ListOptions | undefined>;
  history: z.ZodType<HistoryOptions | undefined>;
  waitForIdle: z.ZodType<WaitOptions | undefined>;
  signalOnly: z.ZodType<SignalOptions | undefined>;
}

/** Schemas of query options. */
export const querySchemas: QuerySchemas = {
  list: z.strictObject({
    limit: pageLimit.optional(),
    cursor: z.string().max(512).optional(),
    parentThreadId: z.unknown().optional(),
    tenant: tenantSchema.optional(),
  }).optional(),
  history: z.strictObject({ limit: pageLimit.optional(), before: engineId.optional() }).optional(),
  waitForIdle: z.strictObject({
    signal: signalSchema.optional(),
    // NaN, Infinity, strings and negatives would wait forever or not at all; past
    // 2^31−1 ms a timer fires at once. 0 asks once, without waiting.
    timeoutMs: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  }).optional(),
  signalOnly: z.strictObject({ signal: signalSchema.optional() }).optional(),
};
