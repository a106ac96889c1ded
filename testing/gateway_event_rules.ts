/**
 * The event-sequence rules the gateway conformance suite checks.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { ProviderEvent } from "../src/provider/gateway.ts";

/**
 * Asserts the structural rules every successful stream obeys: exactly one
 * finish, last; tool calls start once, get deltas only while open, end before
 * the finish; finish state is plain JSON.
 *
 * @param events the events of one successful stream
 * @throws {AssertionError} on the first rule broken
 */
export function checkEventSequence(events: ProviderEvent[]): void {
  const open = new Set<string>();
  const seen = new Set<string>();
  const finishes = events.filter((event) => event.type === "finish");
  assert.equal(finishes.length, 1, "a successful stream has exactly one finish");
  assert.equal(events.at(-1)?.type, "finish", "finish is the last event");
  for (const event of events) {
    switch (event.type) {
      case "text":
      case "reasoning":
        assert.equal(typeof event.delta, "string");
        break;
      case "tool-call-start":
        assert.ok(
          event.callId !== "" && !seen.has(event.callId),
          `call id reused or empty: ${event.callId}`,
        );
        assert.ok(event.name !== "", "tool call without a name");
        seen.add(event.callId);
        open.add(event.callId);
        break;
      case "tool-call-delta":
        assert.ok(open.has(event.callId), `delta outside its call: ${event.callId}`);
        break;
      case "tool-call-end":
        assert.ok(open.delete(event.callId), `end without an open call: ${event.callId}`);
        break;
      case "usage":
        for (const [field, value] of Object.entries(event.usage)) {
          assert.ok(
            Number.isInteger(value) && value >= 0,
            `usage.${field} is not a count: ${value}`,
          );
        }
        break;
      case "finish":
        assert.equal(open.size, 0, "finish while tool calls are open");
        assert.ok(["stop", "tool_calls", "length", "content_filter"].includes(event.reason));
        if (event.state !== undefined) {
          assert.deepEqual(
            JSON.parse(JSON.stringify(event.state)),
            event.state,
            "finish.state is not JSON",
          );
        }
        break;
      default: {
        const unknown: never = event;
        assert.fail(`unknown event: ${JSON.stringify(unknown)}`);
      }
    }
  }
}
