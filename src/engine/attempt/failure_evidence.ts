/**
 * What a provider failure keeps on its turn beyond status and kind
 * (`failure.provider.evidence`): the response body (at most 4 KiB, secrets
 * redacted), the chain of causes, and which timeout fired. It is stored with
 * the turn's end, so it survives the process.
 *
 * @module
 */
import type { ProviderError, ProviderFailureEvidence } from "../../provider/provider_error.ts";
import { describeThrown } from "../run/host_code.ts";

export type { ProviderFailureEvidence } from "../../provider/provider_error.ts";

/** The most body kept, in bytes of UTF-8. */
export const EVIDENCE_BODY_BYTES = 4 * 1024;
const MAX_CAUSES = 5;
const CAUSE_CHARS = 500;

// Credentials that may be echoed in a body or a message: API keys of the
// common providers, bearer tokens, and key=value pairs named like secrets.
const SECRET_PATTERNS: RegExp[] = [
  /\b(sk|rk|pk)-[A-Za-z0-9_-]{8,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /("?(?:api[_-]?key|authorization|x-api-key|access[_-]?token|secret|password)"?\s*[:=]\s*"?)[^"\s,}]{4,}/gi,
];

/**
 * Text with the credentials it may hold replaced by `[redacted]`.
 *
 * @param text a body or a message
 * @returns the text without secrets
 */
export function redactEvidence(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (_match, ...groups) => {
      const prefix = typeof groups[0] === "string" && /[:=]/.test(groups[0]) ? groups[0] : "";
      return prefix ? `${prefix}[redacted]` : "[redacted]";
    });
  }
  return out;
}

/** At most `bytes` of UTF-8, cut on a character boundary. */
function cutBytes(text: string, bytes: number): string {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= bytes) return text;
  return new TextDecoder().decode(encoded.subarray(0, bytes)).replace(/\uFFFD$/, "");
}

/**
 * The evidence of a provider failure, or `undefined` when it has none.
 *
 * @param error the failure that ended the turn
 * @returns body, causes and timeout stage, as far as known
 */
export function evidenceOf(error: ProviderError): ProviderFailureEvidence | undefined {
  const evidence: ProviderFailureEvidence = {};
  if (typeof error.body === "string" && error.body !== "") {
    evidence.body = cutBytes(redactEvidence(error.body), EVIDENCE_BODY_BYTES);
  }
  const causes: string[] = [];
  const seen = new Set<unknown>([error]);
  let cause = (error as { cause?: unknown }).cause;
  while (cause !== undefined && cause !== null && !seen.has(cause) && causes.length < MAX_CAUSES) {
    seen.add(cause);
    const text = cause instanceof Error
      ? `${cause.name}: ${describeThrown(cause.message)}`
      : describeThrown(cause);
    causes.push(redactEvidence(text).slice(0, CAUSE_CHARS));
    cause = cause instanceof Error ? (cause as { cause?: unknown }).cause : undefined;
  }
  if (causes.length > 0) evidence.causes = causes;
  if (error.timeoutStage !== undefined) evidence.timeoutStage = error.timeoutStage;
  return Object.keys(evidence).length > 0 ? evidence : undefined;
}
