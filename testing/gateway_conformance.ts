/**
 * A conformance suite any {@link Gateway} can run: event ordering, exactly one
 * finish, tool-call id consistency and abort behaviour. It registers
 * `node:test` cases, so it runs under `deno test`, `bun test` and `node --test`.
 *
 * @module
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Gateway, ProviderEvent, ProviderRequest } from "../src/provider/gateway.ts";
import { ProviderError } from "../src/provider/provider_error.ts";
import { checkEventSequence } from "./gateway_event_rules.ts";

/**
 * What the suite asks a gateway to do in one case:
 * - `text`: answer with text and no tool calls;
 * - `tool_calls`: answer with at least one tool call;
 * - `abort`: start answering and then wait (e.g. a body that stays open)
 *   until the signal aborts.
 */
export type ConformanceScenario = "text" | "tool_calls" | "abort";

/** Options of {@link gatewayConformance}. */
export interface GatewayConformanceOptions {
  /** Which scenarios the gateway can be driven into; default all three. */
  scenarios?: ConformanceScenario[] | undefined;
  /** The request to send; default a system prompt, a question and one `get_weather` tool. */
  request?: ((scenario: ConformanceScenario) => ProviderRequest) | undefined;
  /** How long an aborted stream may take to end before the case fails as hung; default 5000 ms. */
  abortGraceMs?: number | undefined;
}

/** The request the suite sends unless told otherwise. */
export function conformanceRequest(): ProviderRequest {
  return {
    messages: [
      { role: "system", text: "Be brief." },
      { role: "user", text: "What is the weather in Paris?" },
    ],
    tools: [{
      name: "get_weather",
      description: "Current weather for a city.",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    }],
    fingerprint: "conformance",
  };
}

/**
 * Registers the gateway conformance cases. `makeGateway` is called once per
 * case with the scenario it must produce, so every case gets a fresh
 * instance; a replayed recording or a script is the usual way to drive it.
 *
 * @example
 * ```ts ignore
 * import { gatewayConformance, scriptedGateway } from "@floret/engine/testing";
 * gatewayConformance("scripted", (scenario) =>
 *   scriptedGateway([
 *     scenario === "text" ? { text: "Hi" }
 *       : scenario === "tool_calls" ? { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] }
 *       : { hang: true },
 *   ]));
 * ```
 *
 * @param name the suite name
 * @param makeGateway builds a gateway primed for the scenario
 * @param options which scenarios to run, the request, the abort grace period
 */
export function gatewayConformance(
  name: string,
  makeGateway: (scenario: ConformanceScenario) => Gateway | Promise<Gateway>,
  options: GatewayConformanceOptions = {},
): void {
  const scenarios = new Set(options.scenarios ?? ["text", "tool_calls", "abort"]);
  const requestFor = options.request ?? conformanceRequest;
  const grace = options.abortGraceMs ?? 5000;

  describe(`gateway conformance: ${name}`, () => {
    test("info names provider, model and state key", async () => {
      const gateway = await makeGateway("text");
      assert.equal(typeof gateway.info.provider, "string");
      assert.equal(typeof gateway.info.model, "string");
      assert.ok(gateway.info.stateKey.length > 0, "stateKey is empty");
      assert.equal(typeof gateway.info.capabilities, "object");
    });

    test(
      "text answer: well-formed events, one finish, last",
      { skip: !scenarios.has("text") },
      async () => {
        const gateway = await makeGateway("text");
        const events = await collect(
          gateway.stream(requestFor("text"), { signal: new AbortController().signal }),
        );
        checkEventSequence(events);
        assert.ok(
          events.some((event) => event.type === "text" && event.delta !== ""),
          "no text event",
        );
        assert.ok(
          !events.some((event) => event.type === "tool-call-start"),
          "unexpected tool call",
        );
        const finish = events.at(-1);
        assert.ok(
          finish?.type === "finish" && finish.reason !== "tool_calls",
          "text answer finished as tool_calls",
        );
      },
    );

    test("tool-call answer: start, deltas, end with one id each", {
      skip: !scenarios.has("tool_calls"),
    }, async () => {
      const gateway = await makeGateway("tool_calls");
      const events = await collect(
        gateway.stream(requestFor("tool_calls"), { signal: new AbortController().signal }),
      );
      checkEventSequence(events);
      const starts = events.filter((event) => event.type === "tool-call-start");
      assert.ok(starts.length > 0, "no tool call");
      for (const start of starts) {
        const text = events
          .filter((event) => event.type === "tool-call-delta" && event.callId === start.callId)
          .map((event) => event.type === "tool-call-delta" ? event.argumentsDelta : "")
          .join("");
        if (text !== "") {
          assert.doesNotThrow(() => JSON.parse(text), `arguments of ${start.callId} are not JSON`);
        }
      }
      const finish = events.at(-1);
      assert.ok(
        finish?.type === "finish" && finish.reason === "tool_calls",
        "tool calls did not finish as tool_calls",
      );
    });

    test(
      "abort mid-stream ends promptly with an error",
      { skip: !scenarios.has("abort") },
      async () => {
        const gateway = await makeGateway("abort");
        const controller = new AbortController();
        const reason = new Error("conformance abort");
        const iterator = gateway.stream(requestFor("abort"), { signal: controller.signal })
          [Symbol.asyncIterator]();
        const first = iterator.next();
        first.catch(() => {});
        // Give the gateway a moment to start streaming; a gateway that hangs before any event is fine too.
        const early = await Promise.race([
          first.then((result) => result),
          pause(20).then(() => undefined),
        ]);
        if (early && !early.done) {
          assert.notEqual(
            early.value.type,
            "finish",
            "the abort scenario finished before abort",
          );
        }
        controller.abort(reason);
        const outcome = await withinGrace(
          drain(iterator, early === undefined ? first : undefined),
          grace,
        );
        assert.ok(outcome.kind !== "hung", `the stream did not end within ${grace} ms of abort`);
        assert.ok(outcome.kind === "threw", "the stream ended normally after abort");
        assert.ok(
          outcome.error === reason || outcome.error instanceof ProviderError,
          `aborting threw neither the abort reason nor a ProviderError: ${String(outcome.error)}`,
        );
      },
    );

    test("a signal aborted before the call ends the stream with an error", {
      skip: !scenarios.has("abort"),
    }, async () => {
      const gateway = await makeGateway("abort");
      const controller = new AbortController();
      const reason = new Error("aborted before start");
      controller.abort(reason);
      const iterator = gateway.stream(requestFor("abort"), { signal: controller.signal })
        [Symbol.asyncIterator]();
      const outcome = await withinGrace(drain(iterator), grace);
      assert.ok(outcome.kind === "threw", `expected an error, got ${outcome.kind}`);
      assert.ok(outcome.error === reason || outcome.error instanceof ProviderError);
    });
  });
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

type Outcome = { kind: "threw"; error: unknown } | { kind: "ended" } | { kind: "hung" };

async function drain(
  iterator: AsyncIterator<ProviderEvent>,
  pending?: Promise<IteratorResult<ProviderEvent>>,
): Promise<Outcome> {
  try {
    let result = await (pending ?? iterator.next());
    while (!result.done) result = await iterator.next();
    return { kind: "ended" };
  } catch (error) {
    return { kind: "threw", error };
  }
}

async function withinGrace(outcome: Promise<Outcome>, ms: number): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "hung" }), ms);
  });
  try {
    return await Promise.race([outcome, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
