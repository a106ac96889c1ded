/**
 * How failures look on the wire: one status per error code and a body of
 * `{"error":{"code","message"}}` whose message the server writes itself, so no
 * stack, prompt text or request key from the engine's own message can leak.
 *
 * @module
 */
import { type ErrorCode, FloretError } from "@floret/engine";

/** The HTTP status of each code (http.md). */
export const STATUS_OF_CODE: ReadonlyMap<ErrorCode, number> = new Map<ErrorCode, number>([
  ["invalid_input", 400],
  ["forbidden", 403],
  ["thread_not_found", 404],
  ["interaction_not_found", 404],
  ["not_found", 404],
  ["timeout", 408],
  ["request_conflict", 409],
  ["thread_busy", 409],
  ["no_retry_target", 409],
  ["execution_deferred", 425],
  ["store_too_new", 500],
  ["internal", 500],
  ["host_closed", 503],
  ["storage_failure", 503],
]);

/** The server's own message for each code; the engine's messages never go out. */
const MESSAGE_OF_CODE: ReadonlyMap<ErrorCode, string> = new Map<ErrorCode, string>([
  ["invalid_input", "The request is not valid"],
  ["forbidden", "The request is not allowed"],
  ["thread_not_found", "No such thread"],
  ["interaction_not_found", "No such interaction"],
  ["not_found", "No such route"],
  ["timeout", "The thread did not become idle in time"],
  ["request_conflict", "The request key was used for another request"],
  ["thread_busy", "The thread is busy"],
  ["no_retry_target", "There is no turn to retry"],
  ["execution_deferred", "Execution is deferred on this host"],
  ["store_too_new", "The store was written by a newer engine"],
  ["internal", "The server failed"],
  ["host_closed", "The host is closed"],
  ["storage_failure", "The store failed"],
]);

/** The JSON body of every error answer. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/**
 * An error answer for a code. `detail` is only ever text the server made up
 * itself (such as which body field failed validation), never client or engine text.
 *
 * @param code the error code
 * @param detail a server-written detail appended after a colon
 * @param status overrides the code's status (415 for a wrong content type)
 * @returns the JSON response with the code's status
 */
export function errorResponse(code: ErrorCode, detail?: string, status?: number): Response {
  const base = MESSAGE_OF_CODE.get(code) ?? "The server failed";
  const body: ErrorBody = {
    error: { code, message: detail === undefined ? base : `${base}: ${detail}` },
  };
  return Response.json(body, { status: status ?? STATUS_OF_CODE.get(code) ?? 500 });
}

/**
 * Maps anything a handler threw to an error answer: a FloretError keeps its
 * code (with the server's message), everything else is 500 `internal`.
 *
 * @param error the thrown value
 * @returns the error response
 */
export function responseForError(error: unknown): Response {
  if (error instanceof RequestRefused) return errorResponse(error.code, error.detail, error.status);
  if (error instanceof FloretError && STATUS_OF_CODE.has(error.code)) {
    return errorResponse(error.code);
  }
  return errorResponse("internal");
}

/** A failure found by the HTTP layer itself, answered with a server-written detail. */
export class RequestRefused extends Error {
  /** The code to answer with. */
  readonly code: ErrorCode;
  /** The server-written detail. */
  readonly detail: string;
  /** A status other than the code's own, if any. */
  readonly status?: number;

  /**
   * @param code the code to answer with
   * @param detail server-written text only
   * @param status a status other than the code's own
   */
  constructor(code: ErrorCode, detail: string, status?: number) {
    super(detail);
    this.name = "RequestRefused";
    this.code = code;
    this.detail = detail;
    this.status = status;
  }
}
