/**
 * The background title request of an agent with `titles: "provider"`: one
 * bounded request on the agent's own gateway, with no tools, cut off after
 * 30 s. Its answer never enters the conversation; it only becomes a title.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import type { ResolvedRetryPolicy } from "../../config/retry_policy.ts";
import { fingerprintOf } from "../../identity/fingerprint.ts";
import type { ProviderRequest } from "../../provider/gateway.ts";
import { callProvider } from "./provider_call.ts";
import { signalSwitch } from "./step_abort.ts";

/** The whole title request, attempts included, must finish within this. */
export const TITLE_TIMEOUT_MS = 30_000;
/** The user's text sent for a title is cut to this many characters. */
export const TITLE_INPUT_CHARS = 2_000;
/** The output budget of the title request. */
export const TITLE_MAX_OUTPUT_TOKENS = 64;
/** A generated title is cut to this many characters. */
export const MAX_GENERATED_TITLE = 100;

/** The instructions of the title request (its system message). */
export const TITLE_INSTRUCTIONS =
  "You write titles for conversations. Reply with a short title (at most eight words) " +
  "for the conversation that starts with the user's message below. Reply with the title only: " +
  "no quotes, no trailing period, no explanation.";

/**
 * Asks the agent's gateway for a title of a first message.
 *
 * @param agent whose gateway answers
 * @param text the first message's text
 * @param signal aborts the request (shutdown)
 * @returns the normalised title, or `undefined` when the answer had no usable text
 * @throws the provider's error, a timeout, or the signal's reason
 */
export async function requestTitle(
  agent: Agent,
  text: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const messages: ProviderRequest["messages"] = [
    { role: "system", text: TITLE_INSTRUCTIONS },
    { role: "user", text: Array.from(text).slice(0, TITLE_INPUT_CHARS).join("") },
  ];
  const cap = agent.context.modelMaxOutputTokens ??
    agent.gateway.info?.capabilities?.maxOutputTokens;
  const maxOutputTokens = cap === undefined
    ? TITLE_MAX_OUTPUT_TOKENS
    : Math.min(TITLE_MAX_OUTPUT_TOKENS, cap);
  const body = { messages, tools: [], maxOutputTokens };
  const request: ProviderRequest = { ...body, fingerprint: await fingerprintOf(body) };
  const limit = new AbortController();
  const timer = setTimeout(
    () => limit.abort(new DOMException("The title request took too long", "TimeoutError")),
    TITLE_TIMEOUT_MS,
  );
  const onAbort = (): void => limit.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) onAbort();
  // One attempt: a title is a nicety, not worth the turn's retry budget.
  const policy: ResolvedRetryPolicy = {
    ...agent.retry,
    delaysMs: [],
    timeouts: {
      firstOutputMs: Math.min(agent.retry.timeouts.firstOutputMs, TITLE_TIMEOUT_MS),
      betweenOutputsMs: Math.min(agent.retry.timeouts.betweenOutputsMs, TITLE_TIMEOUT_MS),
      attemptMs: Math.min(agent.retry.timeouts.attemptMs, TITLE_TIMEOUT_MS),
    },
  };
  try {
    const output = await callProvider(agent.gateway, request, policy, signalSwitch(limit.signal), {
      onDelta: () => {},
      onAttempt: () => {},
      onRetry: () => {},
    });
    return normaliseTitle(output.text);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * A model's answer as a title: its first non-blank line, whitespace
 * collapsed, surrounding quotes and a trailing period removed, at most
 * {@link MAX_GENERATED_TITLE} characters.
 */
export function normaliseTitle(answer: string): string | undefined {
  const line = answer.split(/\r\n|\r|\n/).map((part) => part.replace(/\s+/g, " ").trim())
    .find((part) => part !== "");
  if (line === undefined) return undefined;
  const bare = line.replace(/^["'“”‘’`*#\s]+|["'“”‘’`*\s]+$/g, "").replace(/\.$/, "").trim();
  if (bare === "") return undefined;
  return Array.from(bare).slice(0, MAX_GENERATED_TITLE).join("");
}
