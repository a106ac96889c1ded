/**
 * The fields of a provider event the engine stores or concatenates, checked
 * as each event arrives. A gateway is host code: a number where a string
 * belongs would otherwise end up in the journal, and the thread would fail
 * to load later. A wrong field ends the turn with `engine_contract` now.
 *
 * @module
 */
import type { CitedSource, HostedToolCall, ProviderEvent, Usage } from "../../provider/gateway.ts";
import { ContractViolation } from "../run/contract_violation.ts";

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
      expect(typeof event.reason === "string", event.type, "reason");
      expect(event.hosted === undefined || isList(event.hosted, isHosted), event.type, "hosted");
      return expect(
        event.sources === undefined || isList(event.sources, isSource),
        event.type,
        "sources",
      );
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

function isList<T>(value: unknown, check: (item: T) => boolean): boolean {
  return Array.isArray(value) &&
    value.every((item) => typeof item === "object" && item !== null && check(item));
}

function isHosted(call: HostedToolCall): boolean {
  return typeof call.callId === "string" && call.callId !== "" && typeof call.name === "string" &&
    (call.query === undefined || typeof call.query === "string") &&
    (call.status === "completed" || call.status === "error") &&
    (call.results === undefined ||
      isList(call.results, (result: { url: unknown }) => typeof result.url === "string"));
}

function isSource(source: CitedSource): boolean {
  return typeof source.url === "string" &&
    (source.title === undefined || typeof source.title === "string") &&
    (source.start === undefined || Number.isInteger(source.start)) &&
    (source.end === undefined || Number.isInteger(source.end));
}
