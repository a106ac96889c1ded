/**
 * Loads one gpt-tokenizer encoding on first use. Each encoding is a separate
 * entry point of the package (`gpt-tokenizer/encoding/<name>`), imported
 * dynamically so only the rank table a request needs is ever loaded (the
 * o200k table alone is several megabytes).
 *
 * @module
 */
import { optionalPeer } from "../../src/optional_peer.ts";

/** Counts the tokens of one string with a fixed encoding. */
export type TokenCounter = (text: string) => number;

/** The encodings this module can load. */
export type EncodingName = "o200k_base" | "cl100k_base";

interface EncodingModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

const loaded = new Map<EncodingName, Promise<TokenCounter>>();

// Special-token text such as "<|endoftext|>" in user input must count as plain
// text, not throw: an empty disallowed set says so.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// gpt-tokenizer is an optional peer: a missing package is reported with the
// command that installs it. Literal specifiers keep the imports visible to
// bundlers and `deno publish`.
const importers: Record<EncodingName, () => Promise<EncodingModule>> = {
  o200k_base: optionalPeer({
    package: "gpt-tokenizer",
    entry: "@floret/engine/tokens",
    load: () => import("gpt-tokenizer/encoding/o200k_base"),
  }),
  cl100k_base: optionalPeer({
    package: "gpt-tokenizer",
    entry: "@floret/engine/tokens",
    load: () => import("gpt-tokenizer/encoding/cl100k_base"),
  }),
};

function importEncoding(name: EncodingName): Promise<EncodingModule> {
  const load = importers[name];
  if (load === undefined) throw new TypeError(`Unknown encoding: ${String(name)}`);
  return load();
}

/**
 * Returns a counter for an encoding, loading it once per process.
 *
 * @param name the encoding
 * @returns a synchronous counter bound to that encoding
 */
export function loadTokenCounter(name: EncodingName): Promise<TokenCounter> {
  let counter = loaded.get(name);
  if (counter === undefined) {
    counter = importEncoding(name).then((encoding) => (text: string) =>
      text.length === 0 ? 0 : encoding.countTokens(text, PLAIN_TEXT)
    );
    // A failed load must not poison the cache for later callers.
    counter.catch(() => loaded.delete(name));
    loaded.set(name, counter);
  }
  return counter;
}
