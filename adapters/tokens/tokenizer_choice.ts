/**
 * Which tokenizer counts a model's input. OpenAI publishes its encodings, so
 * OpenAI families get exact counts; every other model gets a conservative
 * estimate (see `token_estimate.ts`).
 *
 * @module
 */

/** The tokenizer behind a token count: an OpenAI encoding, or `estimate`. */
export type TokenizerName = "o200k_base" | "cl100k_base" | "estimate";

// Checked in order: the o200k families must win over the older `gpt-4` prefix.
const O200K_FAMILIES =
  /^(?:chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[134](?:-|$)|codex-|computer-use)/;
const CL100K_FAMILIES = /^(?:gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada-002)/;

/**
 * Picks the tokenizer for a model name. Provider prefixes such as `openai/`
 * or `azure/` are ignored, and matching is case-insensitive.
 *
 * @param model the model name as the gateway reports it
 * @returns `o200k_base` for gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and the
 *   o1/o3/o4 series; `cl100k_base` for gpt-4, gpt-3.5 and older OpenAI chat
 *   models; `estimate` for everything else (Claude, DeepSeek, …)
 * @example
 * ```ts
 * import { tokenizerForModel } from "@floret/engine/tokens";
 * console.log(tokenizerForModel("gpt-4.1-mini")); // "o200k_base"
 * console.log(tokenizerForModel("claude-sonnet-4-5")); // "estimate"
 * ```
 */
export function tokenizerForModel(model: string): TokenizerName {
  const name = model.trim().toLowerCase().replace(/^.*\//, "");
  if (O200K_FAMILIES.test(name)) return "o200k_base";
  if (CL100K_FAMILIES.test(name)) return "cl100k_base";
  return "estimate";
}
