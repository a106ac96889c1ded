/**
 * A hand-written gateway for context tests: it tells summary requests (whose
 * first message is not the agent's system prompt) from ordinary ones, answers
 * each from its own queue of behaviours, and records every request.
 */
import {
  type Gateway,
  ProviderError,
  type ProviderEvent,
  type ProviderRequest,
} from "@floret/engine";

/** One answer: text (with optional usage), tool calls, an error, or a hang until aborted. */
export type Answer =
  | { text: string; usage?: { inputTokens?: number; outputTokens?: number } }
  | {
    toolCalls: { name: string; arguments: unknown }[];
    usage?: { inputTokens?: number; outputTokens?: number };
  }
  | { error: ProviderError }
  | { hang: true };

/** The gateway and what it saw. */
export interface ContextGateway extends Gateway {
  /** Ordinary requests, in order. */
  readonly requests: ProviderRequest[];
  /** Summary requests, in order. */
  readonly summaries: ProviderRequest[];
  /** Answers for ordinary requests; when empty, "answer N". */
  readonly answers: Answer[];
  /** Answers for summary requests; when empty, "SUMMARY-N". */
  readonly summaryAnswers: Answer[];
}

/** Builds the gateway; `systemPrompt` is the agent's, which marks ordinary requests. */
export function contextGateway(
  systemPrompt: string,
  capabilities: { contextWindowTokens?: number; maxOutputTokens?: number } = {},
): ContextGateway {
  const requests: ProviderRequest[] = [];
  const summaries: ProviderRequest[] = [];
  const answers: Answer[] = [];
  const summaryAnswers: Answer[] = [];
  let calls = 0;
  async function* play(answer: Answer, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    await Promise.resolve();
    if ("error" in answer) throw answer.error;
    if ("hang" in answer) {
      await new Promise((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      return;
    }
    if ("toolCalls" in answer) {
      for (const call of answer.toolCalls) {
        const callId = `call_${++calls}`;
        yield { type: "tool-call-start", callId, name: call.name };
        yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify(call.arguments) };
        yield { type: "tool-call-end", callId };
      }
      if (answer.usage) yield { type: "usage", usage: answer.usage };
      yield { type: "finish", reason: "tool_calls" };
      return;
    }
    yield { type: "text", delta: answer.text };
    if (answer.usage) yield { type: "usage", usage: answer.usage };
    yield { type: "finish", reason: "stop" };
  }
  return {
    info: {
      provider: "test",
      model: "context-test",
      stateKey: "test:context",
      capabilities: { ...capabilities },
    },
    requests,
    summaries,
    answers,
    summaryAnswers,
    stream(request, { signal }) {
      const first = request.messages[0];
      const ordinary = first?.role === "system" && first.text === systemPrompt;
      const copy = structuredClone({ ...request, fingerprint: "" });
      if (ordinary) {
        requests.push(copy);
        return play(answers.shift() ?? { text: `answer ${requests.length}` }, signal);
      }
      summaries.push(copy);
      return play(summaryAnswers.shift() ?? { text: `SUMMARY-${summaries.length}` }, signal);
    },
  };
}

/** About `n` estimated tokens of plain words (each word costs one to two tokens). */
export function words(n: number, tag = "w"): string {
  return Array.from({ length: n }, (_, i) => `${tag}${i % 10}`).join(" ");
}

/** The text of every message of a request, joined. */
export function textOf(request: ProviderRequest): string {
  return request.messages.map((m) => ("text" in m ? m.text : m.output)).join("\n");
}
