/**
 * A ready `onEvent` for development: one short line per observation, so a
 * newcomer sees turns start and end, tools run, retries wait and failures
 * happen, without writing a logger first.
 *
 * @module
 */
import type { ObservationEvent } from "./events.ts";

/** Options of {@link consoleObserver}. */
export interface ConsoleObserverOptions {
  /** Where each line goes; by default `console.error` (stderr, so a program's own output stays clean). */
  write?: ((line: string) => void) | undefined;
  /**
   * Only these observation types, e.g. `["turn.ended", "provider.retry"]`; an
   * entry ending in `.` or `.*` keeps a family (`"tool."` keeps every `tool.*`).
   * All types by default.
   */
  types?: string[] | undefined;
}

/**
 * A ready `onEvent` that prints one line per observation: turns starting,
 * waiting and ending (with the failure code), tool calls and their results,
 * provider attempts and retries (status, kind, delay), compactions, titles,
 * usage. Lines carry ids, names, counts and durations: never prompt text,
 * tool arguments or outputs, answers, or API keys (a provider's own error
 * message is shortened and stripped of anything shaped like a key).
 *
 * @example
 * ```ts
 * import { consoleObserver, memoryStore, openHost } from "@floret/engine";
 *
 * const host = await openHost({ store: memoryStore(), onEvent: consoleObserver() });
 * // [floret] 10:02:03.114 turn.started thread=thread_… turn=turn_…
 * // [floret] 10:02:03.530 provider.retry thread=thread_… step=1 attempt=1 status=503 kind=server wait=1000ms: Service Unavailable
 * await host.shutdown();
 * ```
 *
 * @param options where lines go and which types to print
 * @returns a function to pass as `openHost({ onEvent })`
 */
export function consoleObserver(
  options: ConsoleObserverOptions = {},
): (event: ObservationEvent) => void {
  const write = options.write ?? ((line: string) => console.error(line));
  const wanted = options.types;
  const keeps = wanted === undefined
    ? () => true
    : (type: string) =>
      wanted.some((entry) =>
        entry === type ||
        (entry.endsWith(".*") && type.startsWith(entry.slice(0, -1))) ||
        (entry.endsWith(".") && type.startsWith(entry))
      );
  return (event) => {
    if (!keeps(event.type)) return;
    write(formatObservation(event));
  };
}

/**
 * The line {@link consoleObserver} prints for an event.
 *
 * @param event an observation
 * @returns one line, without a trailing newline
 */
export function formatObservation(event: ObservationEvent): string {
  const time = typeof event.at === "string" ? event.at.slice(11, 23) : "";
  const head = [`[floret] ${time} ${event.type}`];
  if (event.threadId !== undefined) head.push(`thread=${event.threadId}`);
  if (event.turnId !== undefined) head.push(`turn=${event.turnId}`);
  return [...head, ...detailsOf(event)].join(" ");
}

function detailsOf(event: ObservationEvent): string[] {
  switch (event.type) {
    case "turn.ended":
      return [`outcome=${event.outcome}`, ...opt("failure", event.failureCode)];
    case "turn.recovered":
      return opt("outcome", event.outcome);
    case "run.failed":
    case "queue.handover_failed":
      return [`error: ${safeMessage(event.message)}`];
    case "title.ready":
    case "title.dropped":
      return [`generation=${event.generation}`];
    case "title.failed":
      return [`generation=${event.generation}`];
    case "interaction.opened":
      return [
        `id=${event.interactionId}`,
        `kind=${event.kind}`,
        ...opt("tool", event.toolName),
        ...opt("call", event.callId),
      ];
    case "interaction.resolved":
      return [
        `id=${event.interactionId}`,
        `kind=${event.kind}`,
        ...opt("decision", event.decision),
        ...opt("answers", event.answered),
      ];
    case "subagent.spawned":
      return [`child=${event.childThreadId}`, `agent=${event.agentId}`];
    case "tool.dispatched":
      return [`tool=${event.name}`, `call=${event.callId}`, `effect=${event.effect}`];
    case "tool.result":
      return [
        `tool=${event.name}`,
        `call=${event.callId}`,
        `status=${event.status}`,
        `${event.durationMs}ms`,
      ];
    case "tool.activity_rejected":
      return [`call=${event.callId}`, `problem: ${safeMessage(event.problem)}`];
    case "compaction":
      return [
        `op=${event.operationId}`,
        `status=${event.status}`,
        `trigger=${event.trigger}`,
        ...opt("tokensBefore", event.tokensBefore),
        ...opt("tokensAfter", event.tokensAfter),
      ];
    case "compaction.attempt":
      return [`op=${event.operationId}`, `batch=${event.batch}`, `attempt=${event.attempt}`];
    case "compaction.retry":
      return [
        `op=${event.operationId}`,
        `attempt=${event.attempt}`,
        ...opt("status", event.status),
        ...opt("kind", event.kind),
        `wait=${event.delayMs}ms`,
      ];
    case "provider.attempt":
      return [`step=${event.step}`, `attempt=${event.attempt}`];
    case "provider.retry":
      return [
        `step=${event.step}`,
        `attempt=${event.attempt}`,
        ...opt("status", event.status),
        ...opt("kind", event.kind),
        `wait=${event.delayMs}ms:`,
        safeMessage(event.message),
      ];
    case "usage":
      return [
        `step=${event.step}`,
        ...opt("in", event.usage.inputTokens),
        ...opt("out", event.usage.outputTokens),
        ...opt("cached", event.usage.cacheReadTokens),
        `context=${event.estimateTokens}/${event.windowTokens}`,
      ];
    case "host.restore_prepared":
      return [
        `stoppedTurns=${event.stoppedTurns}`,
        `released=${event.releasedInteractions}`,
        `restoredInputs=${event.restoredInputs}`,
      ];
    default:
      return numbersOf(event);
  }
}

/** `name=value` when the value is set. */
function opt(name: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [`${name}=${value}`];
}

/** An event this version does not know: only its numbers and flags (strings may carry text). */
function numbersOf(event: ObservationEvent): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(event)) {
    if (key === "at" || key === "type") continue;
    if (typeof value === "number" || typeof value === "boolean") out.push(`${key}=${value}`);
  }
  return out;
}

/** At most 160 characters of a message, one line, without anything shaped like a key. */
function safeMessage(message: unknown): string {
  const text = typeof message === "string" ? message : "";
  const oneLine = text.replace(/\s+/g, " ").trim();
  const cleaned = oneLine
    .replace(/\b(bearer|basic|token|key|api[-_ ]?key|authorization)([:= ]+)\S+/gi, "$1$2[redacted]")
    .replace(/\b(sk|pk|rk|xai|gsk|key)[-_][A-Za-z0-9_\-]{6,}/g, "[redacted]")
    .replace(/[A-Za-z0-9_\-+/=]{24,}/g, "[redacted]");
  return cleaned.length > 160 ? `${cleaned.slice(0, 159)}…` : cleaned;
}
