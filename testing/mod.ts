/**
 * Test helpers for hosts and adapter authors: a scripted model and the shared
 * conformance suites.
 *
 * @module
 */
export { scriptedGateway } from "../src/testing/scripted_gateway.ts";
export type { DynamicStep, ScriptedGateway, ScriptStep } from "../src/testing/scripted_gateway.ts";
export { kvConformance } from "./kv_conformance.ts";
export { manualClock, sequentialIds } from "../src/testing/deterministic.ts";
export type { ManualClock } from "../src/testing/deterministic.ts";
export type { KvConformanceOptions } from "./kv_conformance.ts";
export { conformanceRequest, gatewayConformance } from "./gateway_conformance.ts";
export type { ConformanceScenario, GatewayConformanceOptions } from "./gateway_conformance.ts";
