/**
 * What a user sends.
 *
 * @module
 */
import type { ImageAttachment } from "../../provider/gateway.ts";
import type { InputContextItem, InputReference } from "../../validation/turn_input_schemas.ts";

export type { InputContextItem, InputReference };

/**
 * A user's message: text, optional image attachments (`ImageAttachment`),
 * references to threads or their items, and labelled context items. It needs
 * text, an attachment or a reference. References and context are stored with
 * the message, shown on its user item and rendered into every later request
 * (see docs/turn-settings.md).
 */
export interface UserInput {
  /** The message text. */
  text: string;
  /** Images prepared with `prepareModelImage` (see `@floret/engine/images`). */
  attachments?: ImageAttachment[] | undefined;
  /** Threads (or one of their items) the message refers to: at most 64. */
  references?: InputReference[] | undefined;
  /** Labelled context that stays with the message: at most 32 items. */
  context?: InputContextItem[] | undefined;
}
