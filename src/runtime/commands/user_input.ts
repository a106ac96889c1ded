/**
 * What a user sends.
 *
 * @module
 */
import type { ImageAttachment } from "../../provider/gateway.ts";

/** A user's message: text and optional image attachments (`ImageAttachment`). */
export interface UserInput {
  /** The message text. */
  text: string;
  /** Images prepared with `prepareModelImage` (see `@floret/engine/images`). */
  attachments?: ImageAttachment[];
}
