/**
 * Size bounds on what a child hands its parent: reports and previews are cut
 * to a byte budget of UTF-8, keeping their head and saying that they were cut.
 *
 * @module
 */

/** A child's report reaches the parent within this many bytes of UTF-8. */
export const MAX_REPORT_BYTES = 8192;
/** An `inspect_agent` preview stays within this many bytes of UTF-8. */
export const MAX_PREVIEW_BYTES = 512;

const CUT_MARKER = "\n[… cut]";
const encoder = new TextEncoder();

/**
 * Cuts `text` to at most `maxBytes` bytes of UTF-8: the head, cut on a
 * character boundary, then a short marker. Text that fits is returned as is.
 *
 * @param text the text to bound
 * @param maxBytes the budget, marker included
 * @returns the bounded text
 */
export function boundUtf8(text: string, maxBytes: number): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let budget = maxBytes - encoder.encode(CUT_MARKER).length;
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (budget > 0 && (bytes[budget] & 0xc0) === 0x80) budget--;
  return new TextDecoder().decode(bytes.subarray(0, budget)) + CUT_MARKER;
}
