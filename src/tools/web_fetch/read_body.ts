/**
 * Reads a response body up to a byte limit, and no further: the rest is
 * never downloaded, so a huge or endless body costs at most the limit.
 *
 * @module
 */
import { untilAborted } from "../until_aborted.ts";

/** The bytes read, and whether the body went on past the limit. */
export interface LimitedBody {
  /** At most the limit. */
  bytes: Uint8Array;
  /** More bytes followed the limit and were not read. */
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` of a body, then cancels the rest.
 *
 * @param body the response body (`null` reads as empty)
 * @param maxBytes the limit
 * @param signal stops the read (the promise rejects with the signal's reason)
 * @returns the bytes and whether they were cut
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<LimitedBody> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    while (true) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      const room = maxBytes - size;
      if (value.byteLength >= room && (value.byteLength > room || !(await isAtEnd()))) {
        chunks.push(value.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Cancelling closes the connection, so nothing past the limit is fetched.
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };

  // A chunk that fills the limit exactly is cut only if more follows it.
  async function isAtEnd(): Promise<boolean> {
    const next = await untilAborted(reader.read(), signal);
    if (next.done) return true;
    return next.value.byteLength === 0 ? isAtEnd() : false;
  }
}
