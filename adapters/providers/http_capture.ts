/**
 * A fetch wrapper that remembers the last response of one attempt, so errors
 * can carry the exact body and headers the provider sent.
 *
 * @module
 */
import { untilAborted } from "../../src/tools/until_aborted.ts";

/** What the wrapper saw of the response. */
export interface CapturedResponse {
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Headers;
  /** The raw body, captured only for failed responses. */
  body?: string;
}

/** A fetch for one attempt plus what it captured. */
export interface CapturingFetch {
  /** Pass this to the SDK. */
  fetch: typeof globalThis.fetch;
  /** The latest response, once one arrived. */
  readonly last: CapturedResponse | undefined;
}

/**
 * Wraps `base` (or the global fetch, looked up at call time so hosts and tests
 * may replace it) and records each response. Error bodies are read from a
 * clone; the SDKs parse them too, but only the clone keeps the exact bytes.
 *
 * @param base the host's fetch, if any
 * @returns the wrapper and its capture
 */
export function capturingFetch(base: typeof globalThis.fetch | undefined): CapturingFetch {
  let last: CapturedResponse | undefined;
  const wrapped = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const pending = (base ?? globalThis.fetch)(input, init);
    // A fetch that ignores its signal would leave the SDK's request timer
    // armed for weeks and keep the process alive; the signal wins here.
    const response = init?.signal ? await untilAborted(pending, init.signal) : await pending;
    const captured: CapturedResponse = { status: response.status, headers: response.headers };
    last = captured;
    if (!response.ok) {
      try {
        captured.body = await response.clone().text();
      } catch {
        // A body that cannot be read leaves only status and headers to report.
      }
    }
    return response;
  };
  return {
    fetch: wrapped as typeof globalThis.fetch,
    get last() {
      return last;
    },
  };
}
