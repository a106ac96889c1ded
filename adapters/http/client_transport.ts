/**
 * The client's one way to call the API: builds the request (base URL, extra
 * headers, request key, JSON body), sends it, and turns an error answer back
 * into the FloretError the server described.
 *
 * @module
 */
import { type ErrorCode, FloretError } from "@floret/engine";
import { STATUS_OF_CODE } from "./error_response.ts";

/** How the client reaches the API. */
export interface Transport {
  baseUrl: string;
  fetch: (request: Request) => Response | Promise<Response>;
  headers?:
    | Record<string, string>
    | (() => Record<string, string> | Promise<Record<string, string>>);
}

/** One call. */
export interface CallSpec {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  /** Path below the base URL, its parts already encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  requestKey?: unknown;
  body?: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * Sends one call and returns the successful response.
 *
 * @param transport base URL, fetch and headers
 * @param spec the call
 * @returns the response (2xx)
 * @throws {FloretError} the server's code; `invalid_input` for a request key
 *   that is not a string or cannot be a header; `internal` when the API cannot be reached or read,
 *   or when the `headers` function throws.
 *   An aborted signal rejects with its reason, as in-process.
 */
export async function send(transport: Transport, spec: CallSpec): Promise<Response> {
  if (spec.requestKey !== undefined && typeof spec.requestKey !== "string") {
    // As in-process: a key is text. Sent as a header, 5 and "5" would be one key.
    throw new FloretError("invalid_input", "The request key must be a string");
  }
  const url = urlOf(transport.baseUrl, spec);
  let extra: unknown;
  try {
    extra = typeof transport.headers === "function" ? await transport.headers() : transport.headers;
  } catch (error) {
    // The caller's own headers function failed (a token refresh, say): nothing is sent,
    // and the call rejects like every other client failure, with a code.
    throw new FloretError("internal", "The headers function failed", { cause: error });
  }
  let request: Request;
  try {
    request = new Request(url, {
      method: spec.method,
      headers: headersOf(extra, spec),
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: spec.signal,
    });
  } catch (error) {
    // Headers carry Latin-1 text without line breaks only.
    throw new FloretError("invalid_input", "The request key or a header cannot be sent", {
      cause: error,
    });
  }
  let response: Response;
  try {
    response = await transport.fetch(request);
  } catch (error) {
    if (spec.signal?.aborted) throw spec.signal.reason;
    throw new FloretError(
      "internal",
      `The thread API could not be reached: ${new URL(request.url).origin}`,
      {
        cause: error,
      },
    );
  }
  if (response.ok) return response;
  // An in-process app answers even an aborted request; the abort wins, as in-process.
  if (spec.signal?.aborted) throw spec.signal.reason;
  throw await errorOf(response);
}

/**
 * The call's URL as a string: the Request parses it once, so no URL object is
 * built here (on Node each one costs a parse and a serialization per call).
 */
function urlOf(baseUrl: string, spec: CallSpec): string {
  const url = baseUrl + spec.path;
  if (spec.query === undefined) return url;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(spec.query)) {
    if (value !== undefined) params.set(name, String(value));
  }
  const search = params.toString();
  return search === "" ? url : `${url}?${search}`;
}

/**
 * The request's headers as name/value pairs, which the Request copies once;
 * building a Headers object first made the Request copy it a second time.
 * The request key and content type replace any header of the same name given
 * by the caller, as `Headers.set` would.
 */
function headersOf(extra: unknown, spec: CallSpec): HeadersInit | undefined {
  const own: [string, string][] = [];
  if (spec.requestKey !== undefined) own.push(["idempotency-key", String(spec.requestKey)]);
  if (spec.body !== undefined) own.push(["content-type", "application/json"]);
  if (extra === undefined || extra === null) return own.length === 0 ? undefined : own;
  if (typeof extra !== "object" || Array.isArray(extra) || extra instanceof Headers) {
    // Not the documented record: let Headers accept or refuse it as before.
    const headers = new Headers(extra as HeadersInit);
    for (const [name, value] of own) headers.set(name, value);
    return headers;
  }
  const replaced = new Set(own.map(([name]) => name));
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(extra)) {
    if (!replaced.has(name.toLowerCase())) pairs.push([name, value as string]);
  }
  for (const pair of own) pairs.push(pair);
  return pairs;
}

/**
 * The FloretError an error answer describes.
 *
 * @param response a non-2xx response (its body is consumed)
 * @returns the error to throw
 */
export async function errorOf(response: Response): Promise<FloretError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = error?.code;
  if (typeof code === "string" && STATUS_OF_CODE.has(code as ErrorCode)) {
    const message = typeof error?.message === "string" ? error.message : code;
    return new FloretError(code as ErrorCode, message);
  }
  return new FloretError("internal", `The thread API answered HTTP ${response.status}`);
}

/**
 * Reads a JSON answer.
 *
 * @param response a successful response
 * @returns its parsed body
 * @throws {FloretError} `internal` when it is not JSON
 */
export async function jsonOf<T>(response: Response): Promise<T> {
  try {
    return await response.json() as T;
  } catch (error) {
    throw new FloretError("internal", "The thread API sent a body that is not JSON", {
      cause: error,
    });
  }
}
