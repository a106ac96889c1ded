/**
 * Hosted tools: tools the provider runs itself during a response (its web
 * search), passed through on `openAIResponses` and `anthropicMessages`. The
 * engine never dispatches them; they show as tool items with `tool.hosted`.
 *
 * @module
 */
import { FloretError } from "../../src/errors.ts";

/** A tool the provider runs itself. */
export interface HostedTool {
  /** The provider's web search. */
  type: "web_search";
  /**
   * Searches allowed per response. Anthropic's `max_uses`; the OpenAI
   * Responses web search has no such limit and ignores it.
   */
  maxUses?: number | undefined;
}

/** The option the gateways with hosted tools take. */
export interface HostedToolsOption {
  /** Tools the provider runs itself, e.g. `[{ type: "web_search" }]`. */
  hostedTools?: HostedTool[] | undefined;
}

/**
 * Checks `hostedTools` before any I/O.
 *
 * @param value what the host passed
 * @returns the tools, copied (at most one of each type)
 * @throws {FloretError} `invalid_input` for anything but a list of known hosted tools
 */
export function checkHostedTools(value: unknown): HostedTool[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new FloretError("invalid_input", "Gateway hostedTools must be an array");
  }
  const tools: HostedTool[] = [];
  for (const [index, tool] of value.entries()) {
    const { type, maxUses, ...rest } = (tool ?? {}) as Record<string, unknown>;
    if (type !== "web_search") {
      throw new FloretError(
        "invalid_input",
        `Gateway hostedTools[${index}].type must be "web_search"`,
      );
    }
    const unknown = Object.keys(rest);
    if (unknown.length > 0) {
      throw new FloretError(
        "invalid_input",
        `Gateway hostedTools[${index}] has unknown fields: ${unknown.join(", ")}`,
      );
    }
    if (maxUses !== undefined && !(Number.isInteger(maxUses) && (maxUses as number) > 0)) {
      throw new FloretError(
        "invalid_input",
        `Gateway hostedTools[${index}].maxUses must be a positive integer`,
      );
    }
    if (tools.some((seen) => seen.type === type)) {
      throw new FloretError("invalid_input", `Gateway hostedTools lists ${type} twice`);
    }
    tools.push(maxUses === undefined ? { type } : { type, maxUses: maxUses as number });
  }
  return tools;
}

/**
 * Character offsets from a provider's code-point index into UTF-16 offsets
 * of the same text: providers count characters, JavaScript strings count
 * code units, and they differ past the Basic Multilingual Plane.
 *
 * @param text the text the index points into
 * @param codePoints the provider's index
 * @returns the UTF-16 offset (clamped to the text's length)
 */
export function utf16Offset(text: string, codePoints: number): number {
  let units = 0;
  let points = 0;
  while (points < codePoints && units < text.length) {
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
    points++;
  }
  return units;
}
