/**
 * The API key of a gateway, settled at construction: the one given, else the
 * provider's usual environment variable, else `invalid_input` naming it. A
 * missing key used to surface only as a failed turn after the first request.
 * Environment reads live here (adapters), on Node, Bun and Deno alike.
 *
 * @module
 */
import { FloretError } from "../../src/errors.ts";

/** Result of reading one environment variable. */
interface EnvRead {
  value?: string | undefined;
  /** Set when the runtime refused the read (Deno without `--allow-env`). */
  denied?: boolean;
}

/**
 * Reads an environment variable on any runtime; a refused read (a Deno
 * permission) counts as absent and is reported as such.
 *
 * @param name the variable
 * @returns its value, or why there is none
 */
export function readEnv(name: string): EnvRead {
  const runtime = globalThis as {
    Deno?: { env: { get(name: string): string | undefined } };
    process?: { env?: Record<string, string | undefined> };
  };
  try {
    if (runtime.Deno) return { value: runtime.Deno.env.get(name) };
    return { value: runtime.process?.env?.[name] };
  } catch {
    return { denied: true };
  }
}

/**
 * The key a gateway uses.
 *
 * @param given `options.apiKey`
 * @param variable the provider's usual environment variable, e.g. `OPENAI_API_KEY`
 * @param gateway the gateway's name for the message, e.g. `openAIChat`
 * @returns a non-empty key
 * @throws {FloretError} `invalid_input` naming the variable when there is none
 */
export function resolveApiKey(given: unknown, variable: string, gateway: string): string {
  if (typeof given === "string" && given !== "") return given;
  if (given !== undefined && typeof given !== "string") {
    throw new FloretError("invalid_input", `${gateway}: apiKey must be a string`);
  }
  const read = readEnv(variable);
  if (read.value) return read.value;
  const why = read.denied
    ? ` (${variable} could not be read: on Deno, run with --allow-env=${variable})`
    : "";
  throw new FloretError(
    "invalid_input",
    `${gateway} needs an API key: pass { apiKey } or set ${variable}${why}. ` +
      `A server that needs no key (a local model) takes any apiKey, e.g. "none".`,
  );
}
