// Drives a gateway through one request and summarises what it streamed.
import assert from "node:assert/strict";
import type { Gateway, ProviderEvent, ProviderRequest, Usage } from "@floret/engine";
import { conformanceRequest } from "@floret/engine/testing";

/** A request with a system prompt, one user message and one tool (the conformance suite's). */
export function basicRequest(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return { ...conformanceRequest(), fingerprint: "test-fingerprint", ...overrides };
}

/** What a recorded provider turn must stream, for the recording tests. */
export interface RecordedTurn {
  text: string | RegExp;
  reasoning: boolean;
  calls: { name: string; args: unknown }[];
  finish: string;
  usage: Record<string, number>;
}

/** Checks text, reasoning, tool calls (parsed, in order), one finish and usage. */
export function assertRecordedTurn(summary: Summary, expected: RecordedTurn): void {
  if (typeof expected.text === "string") assert.equal(summary.text, expected.text);
  else assert.match(summary.text, expected.text);
  assert.equal(summary.reasoning !== "", expected.reasoning);
  assert.deepEqual(
    summary.toolCalls.map((call) => ({ name: call.name, args: JSON.parse(call.arguments) })),
    expected.calls,
  );
  assert.equal(summary.finishCount, 1);
  assert.equal(summary.finish?.reason, expected.finish);
  assert.deepEqual(summary.usage, expected.usage);
}

export interface RunResult {
  events: ProviderEvent[];
  error?: unknown;
}

/** Streams one request, collecting events and the thrown error, if any. */
export async function runGateway(
  gateway: Gateway,
  request: ProviderRequest = basicRequest(),
  signal: AbortSignal = new AbortController().signal,
): Promise<RunResult> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of gateway.stream(request, { signal })) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

/** A tool call as assembled from its events. */
export interface AssembledCall {
  callId: string;
  name: string;
  arguments: string;
}

/** The assembled view of a successful stream. */
export interface Summary {
  text: string;
  reasoning: string;
  signatures: string[];
  toolCalls: AssembledCall[];
  usage: Usage;
  finish?: Extract<ProviderEvent, { type: "finish" }>;
  finishCount: number;
}

/** Assembles events into text, reasoning, calls, merged usage and the finish. */
export function summarize(events: ProviderEvent[]): Summary {
  const summary: Summary = {
    text: "",
    reasoning: "",
    signatures: [],
    toolCalls: [],
    usage: {},
    finishCount: 0,
  };
  const calls = new Map<string, AssembledCall>();
  for (const event of events) {
    switch (event.type) {
      case "text":
        summary.text += event.delta;
        break;
      case "reasoning":
        summary.reasoning += event.delta;
        if (event.signature) summary.signatures.push(event.signature);
        break;
      case "tool-call-start": {
        const call = { callId: event.callId, name: event.name, arguments: "" };
        calls.set(event.callId, call);
        summary.toolCalls.push(call);
        break;
      }
      case "tool-call-delta": {
        const call = calls.get(event.callId);
        if (call) call.arguments += event.argumentsDelta;
        break;
      }
      case "tool-call-end":
        break;
      case "usage":
        summary.usage = { ...summary.usage, ...event.usage };
        break;
      case "finish":
        summary.finish = event;
        summary.finishCount++;
        break;
    }
  }
  return summary;
}

/**
 * Checks the structural rules every successful stream obeys; returns the
 * first violation, or undefined.
 */
export function violation(events: ProviderEvent[]): string | undefined {
  const open = new Set<string>();
  const closed = new Set<string>();
  let finished = false;
  for (const event of events) {
    if (finished) return `event after finish: ${event.type}`;
    if (event.type === "tool-call-start") {
      if (open.has(event.callId) || closed.has(event.callId)) {
        return `call started twice: ${event.callId}`;
      }
      open.add(event.callId);
    } else if (event.type === "tool-call-delta") {
      if (!open.has(event.callId)) return `delta outside its call: ${event.callId}`;
    } else if (event.type === "tool-call-end") {
      if (!open.delete(event.callId)) return `end without start: ${event.callId}`;
      closed.add(event.callId);
    } else if (event.type === "finish") {
      if (open.size > 0) return `finish with open calls: ${[...open].join(",")}`;
      finished = true;
    }
  }
  return finished ? undefined : "no finish";
}
