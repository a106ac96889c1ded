/**
 * Schemas of the long-work commands (DESIGN §11): goals, queue control and
 * the third-wave options of `deleteQueued`, `editQueued` and `compact`.
 * Unknown fields are refused, as over HTTP.
 *
 * @module
 */
import { z } from "zod";
import type { ImageAttachment } from "../provider/gateway.ts";
import { MAX_GOAL_TEXT } from "../tools/goal_state.ts";
import { imageAttachmentSchema, requestKeySchema, threadIdSchema } from "./command_schemas.ts";
import { isWellFormed } from "./parse_input.ts";

const engineId = z.string().min(1).max(256).refine(isWellFormed, "Id has a lone surrogate");
const threadKey = { threadId: threadIdSchema, requestKey: requestKeySchema };
const goalText = z.string().max(MAX_GOAL_TEXT).refine(
  (text) => text.trim() !== "",
  "Goal text is empty",
)
  .refine(isWellFormed, "Text has a lone surrogate");

/** `setGoal` and `submitGoal` input. */
export interface GoalTextCommand {
  threadId: string;
  requestKey: string;
  text: string;
}
/** `deleteGoal` input. */
export interface ThreadKeyInput {
  threadId: string;
  requestKey: string;
}
/** `steerQueued` input. */
export interface SteerQueuedCommand {
  threadId: string;
  requestKey: string;
  queueId: string;
  expectedText: string;
}
/** `deleteQueued` input: `expectedText`, when given, must still be the queued text. */
export interface DeleteQueuedCommand {
  threadId: string;
  requestKey: string;
  queueId: string;
  expectedText?: string;
}
/** `editQueued` input; `attachments`, when given, replace the queued input's. */
export interface EditQueuedInput {
  threadId: string;
  requestKey: string;
  queueId: string;
  text: string;
  expectedText: string;
  attachments?: ImageAttachment[];
}
/** `compact` input; `continueGoal` goes on working on the active goal after compacting. */
export interface CompactInput {
  threadId: string;
  requestKey: string;
  continueGoal?: boolean;
}
/** `listParentEvents` options. */
export interface ParentEventsOptions {
  limit?: number;
  cursor?: string;
}

/** The long-work schemas, by command. */
export const longWorkSchemas: {
  setGoal: z.ZodType<GoalTextCommand>;
  deleteGoal: z.ZodType<ThreadKeyInput>;
  steerQueued: z.ZodType<SteerQueuedCommand>;
  deleteQueued: z.ZodType<DeleteQueuedCommand>;
  editQueued: z.ZodType<EditQueuedInput>;
  compact: z.ZodType<CompactInput>;
  parentEvents: z.ZodType<ParentEventsOptions>;
} = {
  setGoal: z.strictObject({ ...threadKey, text: goalText }),
  deleteGoal: z.strictObject(threadKey),
  steerQueued: z.strictObject({ ...threadKey, queueId: engineId, expectedText: z.string() }),
  deleteQueued: z.strictObject({
    ...threadKey,
    queueId: engineId,
    expectedText: z.string().optional(),
  }),
  editQueued: z.strictObject({
    ...threadKey,
    queueId: engineId,
    text: z.string().max(1_000_000).refine((text) => text.trim() !== "", "Text is empty")
      .refine(isWellFormed, "Text has a lone surrogate"),
    expectedText: z.string(),
    attachments: z.array(imageAttachmentSchema).max(32).optional(),
  }),
  compact: z.strictObject({ ...threadKey, continueGoal: z.boolean().optional() }),
  parentEvents: z.strictObject({
    limit: z.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(256).optional(),
  }),
};
