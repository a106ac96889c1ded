/**
 * The fields of a provider event the engine stores or concatenates, checked
 * as each event arrives. A gateway is host code: a number where a string
 * belongs would otherwise end up in the journal, and the thread would fail
 * to load later. A wrong field ends the turn with `engine_contract` now.
 *
 * @module
 */
import type { ProviderEvent, Usage } from "../provider/gateway.ts";
import { ContractViolation } from "./contract_violation.ts";

/**
 * Checks one event's fields (its `type` is checked by the caller's switch).
 *
 * @param event what the gateway yielded
 * @throws {ContractViolation} naming the event and field that is wrong
 */
export function checkEventFields(event: ProviderEvent): void {
  switch (event.type) {
    case "text":
    case "reasoning":
      return expect(typeof event.delta === "string", event.type, "delta");
    case "tool-call-start":
      expect(typeof event.callId === "string" && event.callId !== "", event.type, "callId");
      return expect(typeof event.name === "string", event.type, "name");
    case "tool-call-delta":
      expect(typeof event.callId === "string", event.type, "callId");
      return expect(typeof event.argumentsDelta === "string", event.type, "argumentsDelta");
    case "tool-call-end":
      return expect(typeof event.callId === "string", event.type, "callId");
    case "usage":
      return expect(isUsage(event.usage), event.type, "usage");
    case "finish":
      return expect(typeof event.reason === "string", event.type, "reason");
  }
}

function expect(ok: boolean, type: string, field: string): void {
  if (!ok) {
    throw new ContractViolation(
      `The gateway sent a ${type} event whose ${field} has the wrong type`,
    );
  }
}

function isUsage(usage: Usage): boolean {
  if (typeof usage !== "object" || usage === null) return false;
  // `for…in` over own keys: no array of values per usage event.
  for (const key in usage) {
    if (!Object.hasOwn(usage, key)) continue;
    const value = (usage as Record<string, unknown>)[key];
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value))) {
      return false;
    }
  }
  return true;
}
