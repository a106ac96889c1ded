/**
 * Schemas of what a message and its turn may carry besides text and images
 * (DESIGN §11): references to threads and items, labelled context items, and
 * run labels. Each is bounded so that a message's stored form and every
 * later request stay a predictable size; anything past a bound is
 * `invalid_input` and changes nothing.
 *
 * @module
 */
import { z } from "zod";
import { isWellFormed } from "./parse_input.ts";

/** A reference a user's message makes to a thread (and optionally one of its items). */
export interface InputReference {
  /** What is referred to: a thread (the only kind so far). */
  kind: "thread";
  /** The thread. */
  threadId: string;
  /** One item of that thread, when the reference is that precise. */
  itemId?: string;
}

/** A labelled piece of context that stays with the user's message. */
export interface InputContextItem {
  /** What the text is ("Open file", "Selection"): shown to the model before it. */
  label: string;
  /** The context itself. */
  text: string;
}

/** The most references one message may carry. */
export const MAX_REFERENCES = 64;
/** The longest thread or item id a reference may name, in UTF-16 code units. */
export const MAX_REFERENCE_ID_LENGTH = 256;
/** The most context items one message may carry. */
export const MAX_CONTEXT_ITEMS = 32;
/** The longest label of a context item, in UTF-16 code units. */
export const MAX_CONTEXT_LABEL_LENGTH = 256;
/** The longest text of one context item, in UTF-16 code units. */
export const MAX_CONTEXT_TEXT_LENGTH = 65_536;
/** The most text all context items of one message may hold together. */
export const MAX_CONTEXT_TOTAL_LENGTH = 262_144;
/** The most run labels one `send` may carry (DESIGN §11: at most 16 pairs). */
export const MAX_RUN_LABELS = 16;
/** The longest run label key, in UTF-16 code units. */
export const MAX_RUN_LABEL_KEY_LENGTH = 128;
/** The longest run label value, in UTF-16 code units. */
export const MAX_RUN_LABEL_VALUE_LENGTH = 1024;

const referenceId = z.string().min(1, "Reference id is empty")
  .max(MAX_REFERENCE_ID_LENGTH, `Reference id is longer than ${MAX_REFERENCE_ID_LENGTH} characters`)
  .refine(isWellFormed, "Reference id has a lone surrogate");

/** One reference: a thread, and optionally one of its items. */
export const inputReferenceSchema: z.ZodType<InputReference> = z.strictObject({
  kind: z.literal("thread"),
  threadId: referenceId,
  itemId: referenceId.optional(),
});

/** A message's references, at most {@link MAX_REFERENCES}. */
export const inputReferencesSchema: z.ZodType<InputReference[]> = z.array(inputReferenceSchema)
  .max(MAX_REFERENCES, `At most ${MAX_REFERENCES} references`);

/** One context item: a non-blank label and its text. */
export const inputContextItemSchema: z.ZodType<InputContextItem> = z.strictObject({
  label: z.string().max(
    MAX_CONTEXT_LABEL_LENGTH,
    `Context label is longer than ${MAX_CONTEXT_LABEL_LENGTH} characters`,
  ).refine((label) => label.trim() !== "", "Context label is empty")
    .refine(isWellFormed, "Context label has a lone surrogate"),
  text: z.string().max(
    MAX_CONTEXT_TEXT_LENGTH,
    `Context text is longer than ${MAX_CONTEXT_TEXT_LENGTH} characters`,
  ).refine(isWellFormed, "Context text has a lone surrogate"),
});

/** A message's context items: at most {@link MAX_CONTEXT_ITEMS}, {@link MAX_CONTEXT_TOTAL_LENGTH} of text in all. */
export const inputContextSchema: z.ZodType<InputContextItem[]> = z.array(inputContextItemSchema)
  .max(MAX_CONTEXT_ITEMS, `At most ${MAX_CONTEXT_ITEMS} context items`)
  .refine(
    (items) => items.reduce((sum, item) => sum + item.text.length, 0) <= MAX_CONTEXT_TOTAL_LENGTH,
    `Context items hold more than ${MAX_CONTEXT_TOTAL_LENGTH} characters of text together`,
  );

/**
 * Run labels: at most {@link MAX_RUN_LABELS} string pairs with bounded keys
 * and values. `__proto__` is refused as a key: as a plain property it would
 * set the labels object's prototype instead of a label.
 */
export const runLabelsSchema: z.ZodType<Record<string, string>> = z.custom<unknown>(
  // Checked on the input: the record schema would drop that key without a word.
  (value) => typeof value !== "object" || value === null || !Object.hasOwn(value, "__proto__"),
  "Label key __proto__ is reserved",
).pipe(
  z.record(
    z.string().min(1, "Label key is empty")
      .max(
        MAX_RUN_LABEL_KEY_LENGTH,
        `Label key is longer than ${MAX_RUN_LABEL_KEY_LENGTH} characters`,
      )
      .refine(isWellFormed, "Label key has a lone surrogate"),
    z.string().max(
      MAX_RUN_LABEL_VALUE_LENGTH,
      `Label value is longer than ${MAX_RUN_LABEL_VALUE_LENGTH} characters`,
    ).refine(isWellFormed, "Label value has a lone surrogate"),
  ).refine(
    (labels) => Object.keys(labels).length <= MAX_RUN_LABELS,
    `At most ${MAX_RUN_LABELS} labels`,
  ),
);
