/**
 * Renders tools the way OpenAI chat models see them: a TypeScript-like
 * `namespace functions` block appended to the system message. Counting that
 * text, rather than the JSON the client sends, is what makes tool overhead
 * match the provider's `prompt_tokens`.
 *
 * @module
 */

import type { ProviderTool } from "../../src/provider/gateway.ts";

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function renderType(schema: unknown, indent: string): string {
  if (!isSchema(schema)) return "any";
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `${renderType(schema.items, indent)}[]`;
    case "object":
      return isSchema(schema.properties) ? renderObject(schema, indent) : "object";
    default:
      return "any";
  }
}

function renderObject(schema: Schema, indent: string): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const lines: string[] = ["{"];
  for (const [name, property] of Object.entries(properties)) {
    if (isSchema(property) && typeof property.description === "string") {
      lines.push(`${indent}// ${property.description}`);
    }
    const optional = required.has(name) ? "" : "?";
    lines.push(`${indent}${name}${optional}: ${renderType(property, indent)},`);
  }
  lines.push("}");
  return lines.join("\n");
}

/**
 * The text an OpenAI chat model receives for a list of tools; empty when
 * there are none.
 *
 * @param tools the tools offered
 * @returns the rendered namespace block
 */
export function openAIToolText(tools: readonly ProviderTool[]): string {
  if (tools.length === 0) return "";
  const parts = ["# Tools\n\n## functions\n\nnamespace functions {\n"];
  for (const tool of tools) {
    if (tool.description) parts.push(`// ${tool.description}`);
    const properties = isSchema(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
    const input = Object.keys(properties).length === 0
      ? "() => any;"
      : `(_: ${renderObject(tool.inputSchema, "")}) => any;`;
    parts.push(`type ${tool.name} = ${input}\n`);
  }
  parts.push("} // namespace functions");
  return parts.join("\n");
}
