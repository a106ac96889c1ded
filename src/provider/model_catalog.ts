/**
 * The offline model catalog: what common current models can do, as their
 * providers' model pages state it. Gateways fill the `capabilities` a host
 * did not give from here, so a known model gets its context window (for
 * compaction), its output cap and its reasoning levels without set-up.
 *
 * How to refresh it: for each provider, open its model pages (OpenAI:
 * developers.openai.com/api/docs/models; Anthropic:
 * platform.claude.com/docs/en/about-claude/models/overview; DeepSeek:
 * api-docs.deepseek.com/quick_start/pricing), then add or correct rows —
 * the exact model id (no date suffix: dated snapshots find their family),
 * the context window and maximum output in tokens, the reasoning levels the
 * API accepts (OpenAI `xhigh` is our `max`; `none` is not a level), and
 * whether images are accepted. Set {@link MODEL_CATALOG_UPDATED}, and run
 * tests/model_info.test.ts, which checks the table is well-formed. Leave out
 * what the pages do not say rather than guess.
 *
 * @module
 */

/** A reasoning level (the same levels as `defineAgent({ reasoning: { effort } })`). */
export type ModelReasoningLevel = "minimal" | "low" | "medium" | "high" | "max";

/** What a model can do, from the catalog. */
export interface ModelInfo {
  /** The context window in tokens. */
  contextWindowTokens: number;
  /** The largest output of one response, in tokens. */
  maxOutputTokens?: number;
  /** The reasoning levels the API takes for it; absent for models that do not reason by level. */
  reasoningLevels?: ModelReasoningLevel[];
  /** Whether user messages may carry images. */
  imageInput?: boolean;
}

/** When the catalog was last checked against the providers' model pages. */
export const MODEL_CATALOG_UPDATED = "2026-12-05";

type Row = readonly [
  contextWindowTokens: number,
  maxOutputTokens: number,
  reasoningLevels: readonly ModelReasoningLevel[] | undefined,
  imageInput: boolean,
];

const GPT5: readonly ModelReasoningLevel[] = ["minimal", "low", "medium", "high"];
const GPT51: readonly ModelReasoningLevel[] = ["low", "medium", "high"];
const XHIGH: readonly ModelReasoningLevel[] = ["low", "medium", "high", "max"];
const O_SERIES: readonly ModelReasoningLevel[] = ["low", "medium", "high"];
const CLAUDE: readonly ModelReasoningLevel[] = ["low", "medium", "high", "max"];

/** provider → model id → row. Keys are lower case. */
const CATALOG: Readonly<Record<string, Readonly<Record<string, Row>>>> = {
  openai: {
    "gpt-5.5": [1_050_000, 128_000, XHIGH, true],
    "gpt-5.4": [1_050_000, 128_000, XHIGH, true],
    "gpt-5.2": [400_000, 128_000, XHIGH, true],
    "gpt-5.1-codex-max": [400_000, 128_000, XHIGH, true],
    "gpt-5.1-codex": [400_000, 128_000, GPT51, true],
    "gpt-5.1": [400_000, 128_000, GPT51, true],
    "gpt-5-codex": [400_000, 128_000, GPT51, true],
    "gpt-5": [400_000, 128_000, GPT5, true],
    "gpt-5-mini": [400_000, 128_000, GPT5, true],
    "gpt-5-nano": [400_000, 128_000, GPT5, true],
    "gpt-4.1": [1_047_576, 32_768, undefined, true],
    "gpt-4.1-mini": [1_047_576, 32_768, undefined, true],
    "gpt-4.1-nano": [1_047_576, 32_768, undefined, true],
    "gpt-4o": [128_000, 16_384, undefined, true],
    "gpt-4o-mini": [128_000, 16_384, undefined, true],
    "o3": [200_000, 100_000, O_SERIES, true],
    "o3-mini": [200_000, 100_000, O_SERIES, false],
    "o4-mini": [200_000, 100_000, O_SERIES, true],
  },
  anthropic: {
    "claude-opus-5-5": [1_000_000, 128_000, CLAUDE, true],
    "claude-sonnet-5-5": [1_000_000, 128_000, CLAUDE, true],
    "claude-opus-5": [1_000_000, 128_000, CLAUDE, true],
    "claude-sonnet-5": [1_000_000, 128_000, CLAUDE, true],
    "claude-opus-4-6": [1_000_000, 128_000, CLAUDE, true],
    "claude-sonnet-4-6": [1_000_000, 128_000, CLAUDE, true],
    "claude-opus-4-5": [200_000, 64_000, CLAUDE, true],
    "claude-sonnet-4-5": [200_000, 64_000, CLAUDE, true],
    "claude-haiku-4-5": [200_000, 64_000, CLAUDE, true],
    "claude-opus-4-1": [200_000, 32_000, CLAUDE, true],
    "claude-opus-4": [200_000, 32_000, CLAUDE, true],
    "claude-opus-4-0": [200_000, 32_000, CLAUDE, true],
    "claude-sonnet-4": [200_000, 64_000, CLAUDE, true],
    "claude-sonnet-4-0": [200_000, 64_000, CLAUDE, true],
    "claude-3-7-sonnet": [200_000, 64_000, CLAUDE, true],
    "claude-3-5-haiku": [200_000, 8_192, undefined, true],
  },
  deepseek: {
    "deepseek-chat": [128_000, 8_192, undefined, false],
    "deepseek-reasoner": [128_000, 65_536, undefined, false],
  },
};

// Dated snapshots and moving aliases name the same model as their family:
// gpt-4o-2024-08-06, claude-sonnet-4-5-20250929, claude-3-5-haiku-latest.
const SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/**
 * What a known model can do, from the offline catalog. Dated snapshots
 * (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`) and `-latest` aliases
 * find their family's row; names are compared without case.
 *
 * @param provider the gateway's provider name (`openai`, `anthropic`, `deepseek`)
 * @param model the model id the provider expects
 * @returns a copy of the model's row, or `undefined` for a model the catalog does not know
 * @example
 * ```ts
 * import { modelInfo } from "@floret/engine";
 * const info = modelInfo("openai", "gpt-4o-2024-08-06");
 * console.log(info?.contextWindowTokens); // 128000
 * ```
 */
export function modelInfo(provider: string, model: string): ModelInfo | undefined {
  if (typeof provider !== "string" || typeof model !== "string") return undefined;
  const table = CATALOG[provider.trim().toLowerCase()];
  if (!table) return undefined;
  const name = model.trim().toLowerCase();
  const row = Object.hasOwn(table, name)
    ? table[name]
    : Object.hasOwn(table, name.replace(SUFFIX, ""))
    ? table[name.replace(SUFFIX, "")]
    : undefined;
  if (!row) return undefined;
  const [contextWindowTokens, maxOutputTokens, reasoningLevels, imageInput] = row;
  const info: ModelInfo = { contextWindowTokens, maxOutputTokens, imageInput };
  if (reasoningLevels) info.reasoningLevels = [...reasoningLevels];
  return info;
}

/**
 * Every row of the catalog, for tests and for hosts that list models.
 *
 * @returns `[provider, model, info]` triples, copies
 */
export function modelCatalog(): [provider: string, model: string, info: ModelInfo][] {
  return Object.entries(CATALOG).flatMap(([provider, table]) =>
    Object.keys(table).map((model) =>
      [provider, model, modelInfo(provider, model)!] as [string, string, ModelInfo]
    )
  );
}

/**
 * A gateway's capabilities with the catalog's facts filled in where the host
 * gave none: the host's fields always win.
 *
 * @param provider the gateway's provider name
 * @param model the model id
 * @param given the capabilities the host passed
 * @returns the capabilities to use (a new object)
 */
export function capabilitiesWithModelInfo<C extends object>(
  provider: string,
  model: string,
  given: C | undefined,
): C & {
  contextWindowTokens?: number;
  maxOutputTokens?: number;
  reasoning?: "unsupported" | "supported";
  reasoningLevels?: ModelReasoningLevel[];
  images?: boolean;
  imageInput?: boolean;
} {
  const info = modelInfo(provider, model);
  const filled: Record<string, unknown> = {};
  if (info) {
    filled.contextWindowTokens = info.contextWindowTokens;
    if (info.maxOutputTokens !== undefined) filled.maxOutputTokens = info.maxOutputTokens;
    if (info.reasoningLevels) {
      filled.reasoning = "supported";
      filled.reasoningLevels = info.reasoningLevels;
    }
    if (info.imageInput !== undefined) {
      filled.images = info.imageInput;
      filled.imageInput = info.imageInput;
    }
  }
  const own = (given ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(own)) {
    if (value !== undefined) filled[key] = value;
  }
  // One fact under two names: the host's spelling decides both.
  const images = own.images ?? own.imageInput;
  if (typeof images === "boolean") filled.images = filled.imageInput = images;
  if (own.reasoning === "unsupported" && own.reasoningLevels === undefined) {
    delete filled.reasoningLevels;
  }
  return filled as ReturnType<typeof capabilitiesWithModelInfo<C>>;
}
