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

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR); the same types
// as `@floret/engine`.
export type {
  Capabilities,
  CitedSource,
  Gateway,
  GatewayInfo,
  HostedToolCall,
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvKeyPart,
  KvListOptions,
  KvSelector,
  KvStore,
  ProviderError,
  ProviderErrorKind,
  ProviderEvent,
  ProviderMessage,
  ProviderRequest,
  ProviderTool,
  ReasoningEffort,
  RetryAdvice,
  Usage,
} from "../mod.ts";
