/**
 * What the HTTP layer reads from a request before the service sees it: the
 * request key, the JSON body (content type, size, zod schema) and the query.
 * Every refusal is a {@link RequestRefused} with a server-written detail.
 *
 * @module
 */
import { z } from "zod";
import { RequestRefused } from "./error_response.ts";

/** Bodies above this many bytes are refused before they are parsed. */
export const MAX_BODY_BYTES: number = 25 * 1024 * 1024;
/** Longest request key, as in the engine (DESIGN §8). */
const MAX_KEY_LENGTH = 256;

/**
 * The request key of a mutation, from `Idempotency-Key`.
 *
 * @param request the request
 * @returns the trimmed key
 * @throws {RequestRefused} `invalid_input` when it is missing, empty or longer than 256 characters
 */
export function requestKeyOf(request: Request): string {
  const key = request.headers.get("idempotency-key")?.trim();
  if (!key || key.length > MAX_KEY_LENGTH) {
    throw new RequestRefused(
      "invalid_input",
      "the Idempotency-Key header must hold 1 to 256 characters",
    );
  }
  return key;
}

/**
 * Reads and validates a JSON body. An empty body with no content type reads
 * as `{}`, so commands without fields can be posted bare.
 *
 * @param request the request (its body is consumed)
 * @param schema the body's schema
 * @returns the parsed body
 * @throws {RequestRefused} `invalid_input` (415 for a content type other than JSON)
 */
export async function jsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
): Promise<z.infer<S>> {
  const contentType = request.headers.get("content-type");
  const text = await boundedText(request);
  if (contentType !== null && !isJson(contentType)) {
    throw new RequestRefused("invalid_input", "the body must be application/json", 415);
  }
  if (text === "" && contentType === null) return parseWith(schema, {});
  if (contentType === null) {
    throw new RequestRefused("invalid_input", "the body must be application/json", 415);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RequestRefused("invalid_input", "the body is not valid JSON");
  }
  return parseWith(schema, value);
}

/**
 * Validates query parameters (unknown ones are ignored).
 *
 * @param url the request URL
 * @param schema the schema of the parameters
 * @returns the parsed parameters
 * @throws {RequestRefused} `invalid_input`
 */
export function queryOf<S extends z.ZodType>(url: string, schema: S): z.infer<S> {
  const params = new URL(url).searchParams;
  const raw: Record<string, string> = Object.create(null);
  for (const [name, value] of params) raw[name] = value;
  return parseWith(schema, raw, "query");
}

/** A decimal number in a query string (`limit`, `timeoutMs`). */
export const queryNumber: z.ZodType<number, string> = z.string().regex(
  /^\d+(\.\d+)?$/,
  "expected a non-negative number",
).transform(Number);

function parseWith<S extends z.ZodType>(schema: S, value: unknown, where = "body"): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // Only the schema's own paths and issue codes: never the client's values or key names.
  const problems = parsed.error.issues.slice(0, 5).map((issue) =>
    `${[where, ...issue.path.map(String)].join(".")} ${issue.code}`
  );
  throw new RequestRefused("invalid_input", problems.join("; "));
}

/**
 * The body as text, refused past {@link MAX_BODY_BYTES} without reading further
 * (a declared length is checked before any byte is read).
 */
async function boundedText(request: Request): Promise<string> {
  const tooLarge = (): RequestRefused =>
    new RequestRefused("invalid_input", "the body is larger than 25 MiB");
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return decoder.decode(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return decoder.decode(all);
}

const decoder = new TextDecoder();

function isJson(contentType: string): boolean {
  const mediaType = contentType.split(";", 1)[0].trim().toLowerCase();
  return mediaType === "application/json";
}
