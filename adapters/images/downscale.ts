/**
 * Area-averaging downscale of an RGBA bitmap. imagescript only resizes by
 * nearest neighbour, which drops most source pixels and turns text and fine
 * lines into noise; averaging every covered pixel keeps them legible.
 * Colours are averaged premultiplied by alpha so transparent pixels do not
 * bleed dark fringes into opaque ones.
 *
 * @module
 */

import type { Bitmap } from "./exif_orientation.ts";

interface Span {
  first: number;
  weights: Float64Array;
}

/** For each output index, the source indices it covers and their coverage. */
function spans(from: number, to: number): Span[] {
  const scale = from / to;
  const result: Span[] = [];
  for (let i = 0; i < to; i++) {
    const start = i * scale;
    const end = Math.min(from, (i + 1) * scale);
    const first = Math.floor(start);
    const last = Math.min(from, Math.ceil(end));
    const weights = new Float64Array(last - first);
    for (let j = first; j < last; j++) {
      weights[j - first] = (Math.min(end, j + 1) - Math.max(start, j)) / scale;
    }
    result.push({ first, weights });
  }
  return result;
}

/**
 * Shrinks a bitmap to the given size; never enlarges.
 *
 * @param bitmap the source pixels
 * @param width target width, 1 ≤ width ≤ source width
 * @param height target height, 1 ≤ height ≤ source height
 * @returns the resampled pixels (the input itself when the size is unchanged)
 */
export function downscale(bitmap: Bitmap, width: number, height: number): Bitmap {
  const { width: w, height: h, data } = bitmap;
  if (width === w && height === h) return bitmap;
  // Horizontal pass into premultiplied floats: width × h.
  const columns = spans(w, width);
  const wide = new Float32Array(width * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < width; x++) {
      const { first, weights } = columns[x];
      let r = 0, g = 0, b = 0, a = 0;
      for (let k = 0; k < weights.length; k++) {
        const at = (y * w + first + k) * 4;
        const alpha = data[at + 3] * weights[k];
        r += data[at] * alpha;
        g += data[at + 1] * alpha;
        b += data[at + 2] * alpha;
        a += alpha;
      }
      const to = (y * width + x) * 4;
      wide[to] = r;
      wide[to + 1] = g;
      wide[to + 2] = b;
      wide[to + 3] = a;
    }
  }
  // Vertical pass, then un-premultiply into bytes.
  const rows = spans(h, height);
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const { first, weights } = rows[y];
    for (let x = 0; x < width; x++) {
      let r = 0, g = 0, b = 0, a = 0;
      for (let k = 0; k < weights.length; k++) {
        const at = ((first + k) * width + x) * 4;
        r += wide[at] * weights[k];
        g += wide[at + 1] * weights[k];
        b += wide[at + 2] * weights[k];
        a += wide[at + 3] * weights[k];
      }
      const to = (y * width + x) * 4;
      if (a > 0) {
        out[to] = Math.round(r / a);
        out[to + 1] = Math.round(g / a);
        out[to + 2] = Math.round(b / a);
      }
      out[to + 3] = Math.round(a);
    }
  }
  return { width, height, data: out };
}
