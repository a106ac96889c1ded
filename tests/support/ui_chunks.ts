/**
 * The AI SDK's UI message stream chunks that Floret writes, as strict zod
 * schemas written from the SDK's published chunk union (protocol v1), so a
 * test fails when the chat route writes a chunk `useChat` would refuse.
 */
import { z } from "zod";
import { readSse } from "./http.ts";

const id = z.string().min(1);
const chunkSchema = z.union([
  z.strictObject({ type: z.literal("start"), messageId: z.string().optional() }),
  z.strictObject({ type: z.enum(["start-step", "finish-step"]) }),
  z.strictObject({
    type: z.enum(["text-start", "text-end", "reasoning-start", "reasoning-end"]),
    id,
  }),
  z.strictObject({ type: z.enum(["text-delta", "reasoning-delta"]), id, delta: z.string() }),
  z.strictObject({
    type: z.literal("tool-input-available"),
    toolCallId: id,
    toolName: id,
    input: z.unknown(),
  }),
  z.strictObject({ type: z.literal("tool-output-available"), toolCallId: id, output: z.unknown() }),
  z.strictObject({ type: z.literal("tool-output-error"), toolCallId: id, errorText: z.string() }),
  z.strictObject({ type: z.literal("tool-output-denied"), toolCallId: id }),
  z.strictObject({ type: z.literal("tool-approval-request"), approvalId: id, toolCallId: id }),
  z.strictObject({
    type: z.string().startsWith("data-"),
    id: z.string().optional(),
    data: z.unknown(),
    transient: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal("error"), errorText: z.string() }),
  z.strictObject({
    type: z.literal("finish"),
    finishReason: z.enum(["stop", "length", "content-filter", "tool-calls", "error", "other"])
      .optional(),
  }),
]);

/** One chunk, or the end marker. */
export type Chunk = Record<string, unknown>;

/**
 * The `data:` payloads of a UI message stream, each checked against the
 * SDK's chunk schema; the stream must end with `[DONE]` and nothing after it.
 */
export async function uiChunksOf(response: Response): Promise<(Chunk | "[DONE]")[]> {
  const events = await readSse(response);
  const out: (Chunk | "[DONE]")[] = [];
  for (const event of events) {
    if (event.data === undefined) continue;
    if (event.data === "[DONE]") {
      out.push("[DONE]");
      continue;
    }
    const parsed = chunkSchema.safeParse(JSON.parse(event.data));
    if (!parsed.success) throw new Error(`Not a UI message chunk: ${event.data}`);
    out.push(parsed.data as Chunk);
  }
  if (out.at(-1) !== "[DONE]" || out.indexOf("[DONE]") !== out.length - 1) {
    throw new Error("The stream does not end with one [DONE]");
  }
  return out;
}

/** The chunk types in order (`[DONE]` as itself). */
export const typesOf = (chunks: (Chunk | "[DONE]")[]): string[] =>
  chunks.map((c) => (c === "[DONE]" ? c : String(c.type)));
