/**
 * Turns whatever an SDK call or stream threw into a {@link ProviderError} with
 * retry advice, or passes the caller's abort reason through.
 *
 * @module
 */
import { ProviderError } from "../../src/provider/provider_error.ts";
import { FloretError } from "../../src/errors.ts";
import type { CapturedResponse } from "./http_capture.ts";
import { retryAfterFromHeaders, retryAfterFromMessage } from "./retry_after.ts";
import { classifyFailure } from "./failure_class.ts";

/** The parts of an SDK `APIError` both SDKs share. */
export interface SdkApiError {
  /** HTTP status; undefined for errors sent inside a 200 stream. */
  status?: number;
  /** Response headers. */
  headers?: Headers;
  /** The parsed error body (or its `error` member). */
  error?: unknown;
  /** The provider's request id. */
  requestID?: string | null;
  /** The SDK's message. */
  message: string;
}

/** How to recognise one SDK's error classes without importing the other SDK. */
export interface SdkErrorTypes {
  /** Any API error (status errors, in-stream errors, connection errors). */
  isApiError(error: unknown): error is SdkApiError;
  /** The request timed out before a response. */
  isTimeout(error: unknown): boolean;
  /** The connection failed before a response. */
  isConnection(error: unknown): boolean;
}

/** What the mapping needs to know about the attempt. */
export interface ErrorContext {
  /** The caller's signal: when aborted, its reason is rethrown. */
  signal: AbortSignal;
  /** Redacted from every message and body. */
  apiKey?: string;
  /** The last response the attempt saw. */
  capture?: CapturedResponse;
  /** The SDK's error classes. */
  sdk: SdkErrorTypes;
  /** For messages, e.g. `OpenAI`. */
  label: string;
}

/**
 * Removes the API key and provider-masked key fragments (`sk-…***1234`) from
 * text that ends up in errors.
 *
 * @param text any text
 * @param apiKey the key to remove
 * @returns the text without secrets
 */
export function redactSecrets(text: string, apiKey: string | undefined): string {
  let out = text;
  if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join("[redacted]");
  return out.replace(/[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g, "[redacted]");
}

/**
 * The error for a stream that ended without its terminal event, or with bytes
 * that do not parse. Retrying the request is safe: nothing was committed.
 *
 * @param message what was wrong
 * @param cause the underlying failure
 * @returns a retryable ProviderError of kind `stream_interrupted`
 */
export function streamInterrupted(
  message: string,
  cause?: unknown,
  requestId?: string,
): ProviderError {
  return new ProviderError(`Provider stream interrupted: ${message}`, {
    retry: "retryable",
    kind: "stream_interrupted",
    requestId,
    cause,
  });
}

/**
 * Maps a thrown value to what the gateway should throw.
 *
 * @param error what the SDK or the parser threw
 * @param context the attempt
 * @returns the abort reason (when the signal fired), a FloretError or ProviderError unchanged,
 *   or a new ProviderError
 */
export function toProviderError(error: unknown, context: ErrorContext): unknown {
  if (context.signal.aborted) return context.signal.reason;
  if (error instanceof FloretError) return error;
  const headers = context.capture?.headers;
  const streamRequestId = headers?.get("x-request-id") ?? headers?.get("request-id") ?? undefined;
  if (error instanceof ProviderError) {
    // Parser errors know nothing of the response; add its request id for support tickets.
    if (error.requestId !== undefined || streamRequestId === undefined) return error;
    return new ProviderError(error.message, {
      status: error.status,
      retry: error.retry,
      retryAfterMs: error.retryAfterMs,
      kind: error.kind,
      providerCode: error.providerCode,
      requestId: streamRequestId,
      body: error.body,
      cause: error.cause,
    });
  }
  const { sdk, label } = context;
  if (sdk.isTimeout(error)) {
    return new ProviderError(`${label} request timed out`, {
      retry: "timeout",
      kind: "server",
      cause: safeCause(error, context.apiKey),
    });
  }
  if (sdk.isConnection(error)) {
    const detail = redactSecrets(
      error instanceof Error ? error.message : String(error),
      context.apiKey,
    );
    return new ProviderError(`${label} connection failed: ${detail}`, {
      retry: "retryable",
      kind: "server",
      cause: safeCause(error, context.apiKey),
    });
  }
  if (sdk.isApiError(error)) return fromApiError(error, context);
  const detail = error instanceof Error ? error.message : String(error);
  if (context.capture === undefined) {
    // Failing before any response is a setup problem (no credentials, a bad
    // header); retrying the same request cannot fix it.
    return new ProviderError(
      `${label} request could not be sent: ${redactSecrets(detail, context.apiKey)}`,
      {
        retry: "never",
        kind: "unknown",
        cause: safeCause(error, context.apiKey),
      },
    );
  }
  // Anything else happened while reading the body: bad JSON, a cut connection.
  return streamInterrupted(
    redactSecrets(detail, context.apiKey),
    safeCause(error, context.apiKey),
    streamRequestId,
  );
}

/**
 * Keeps the underlying error as `cause` unless its text carries the key (an
 * SDK message quoting a provider that echoed it); then a redacted copy stands in.
 */
function safeCause(error: unknown, apiKey: string | undefined): unknown {
  if (!apiKey || !(error instanceof Error)) return error;
  const text = `${error.message}\n${error.stack ?? ""}`;
  if (!text.includes(apiKey)) return error;
  const copy = new Error(redactSecrets(error.message, apiKey));
  copy.name = error.name;
  return copy;
}

function fromApiError(error: SdkApiError, context: ErrorContext): ProviderError {
  const headers = error.headers ?? context.capture?.headers;
  const rawBody = error.status !== undefined ? context.capture?.body : undefined;
  const parsed = parseBody(rawBody) ?? error.error;
  const outer = isRecord(parsed) ? parsed : {};
  const inner = isRecord(outer.error) ? outer.error : outer;
  const type = stringOf(inner.type);
  const code = stringOf(inner.code) ?? numberText(inner.code);
  const details = isRecord(inner.details) ? stringOf(inner.details.error_code) : undefined;
  const providerMessage = stringOf(inner.message) ?? error.message;
  const status = error.status;
  const advice = classifyFailure({
    status: status ?? (typeof inner.code === "number" ? inner.code : undefined),
    type,
    code: details ?? code,
    message: providerMessage,
    shouldRetry: headers?.get("x-should-retry") ?? undefined,
  });
  const requestId = stringOf(outer.request_id) ?? headers?.get("x-request-id") ??
    headers?.get("request-id") ?? error.requestID ?? undefined;
  const where = status === undefined ? "in stream" : `HTTP ${status}`;
  const providerCode = details ?? code ?? type;
  const message = redactSecrets(
    `${context.label} request failed: ${where}${
      providerCode ? ` (${providerCode})` : ""
    }: ${providerMessage}`,
    context.apiKey,
  );
  const body = rawBody ?? (parsed === undefined ? undefined : JSON.stringify(parsed));
  return new ProviderError(message, {
    status,
    retry: advice.retry,
    kind: advice.kind,
    retryAfterMs: advice.retry === "never"
      ? undefined
      : retryAfterFromHeaders(headers) ?? retryAfterFromMessage(providerMessage),
    providerCode,
    requestId: requestId ?? undefined,
    body: body === undefined ? undefined : redactSecrets(body, context.apiKey),
    cause: safeCause(error, context.apiKey),
  });
}

function parseBody(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function numberText(value: unknown): string | undefined {
  return typeof value === "number" ? String(value) : undefined;
}
