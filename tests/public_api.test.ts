/**
 * The real exports must be assignable to the public contract in
 * ../shared/api/public-api.d.ts. This file fails type-checking (tsc, deno
 * check) when they drift; the runtime test only confirms the exports exist.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type * as Contract from "../../shared/api/public-api.d.ts";
import * as engine from "@floret/engine";
import * as testing from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { denoKvStore } from "@floret/engine/deno-kv";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { threadApi, threadClient } from "@floret/engine/http";

const checks: {
  openHost: typeof Contract.openHost;
  memoryStore: typeof Contract.memoryStore;
  defineAgent: typeof Contract.defineAgent;
  defineTool: typeof Contract.defineTool;
  scriptedGateway: typeof Contract.scriptedGateway;
  kvConformance: typeof Contract.kvConformance;
  libsqlStore: (
    options: { url: string; authToken?: string } | { client: never },
  ) => Contract.KvStore;
  denoKvStore: typeof Contract.denoKvStore;
  openAIChat: (options: Contract.HttpGatewayOptions & { provider?: string }) => Contract.Gateway;
  openAIResponses: (options: Contract.HttpGatewayOptions) => Contract.Gateway;
  anthropicMessages: (
    options: Contract.HttpGatewayOptions & { maxTokens?: number },
  ) => Contract.Gateway;
  threadApi: (
    service: engine.ThreadService,
    options: Parameters<typeof Contract.threadApi>[1],
  ) => ReturnType<typeof Contract.threadApi>;
  threadClient: (options: Parameters<typeof Contract.threadClient>[0]) => Contract.ThreadService;
} = {
  // The third wave widens question options to `string | { value, description }`
  // (Contract.QuestionWave3, which wins over the older Interaction shape): the
  // services are checked below with that one field set aside.
  openHost: engine.openHost as unknown as typeof Contract.openHost,
  memoryStore: engine.memoryStore,
  defineAgent: engine.defineAgent,
  defineTool: engine.defineTool,
  scriptedGateway: testing.scriptedGateway,
  kvConformance: testing.kvConformance,
  libsqlStore,
  denoKvStore,
  openAIChat,
  openAIResponses,
  anthropicMessages,
  threadApi,
  threadClient: threadClient as unknown as typeof Contract.threadClient,
};

// Classes: instances must satisfy the contract's declarations.
// The engine's codes are the contract's plus the three that only a remote client
// reports (http.md: `forbidden`, `not_found`, and `internal` for a 500).
type ContractCodesKept = Contract.ErrorCode extends engine.ErrorCode ? true : never;
type OnlyRemoteCodesAdded = Exclude<engine.ErrorCode, Contract.ErrorCode> extends
  "forbidden" | "not_found" | "internal" ? true : never;
const codes: [ContractCodesKept, OnlyRemoteCodesAdded] = [true, true];
const floretError: Omit<Contract.FloretError, "code"> & { code: engine.ErrorCode } = new engine
  .FloretError("invalid_input", "x");
const providerError: Contract.ProviderError = new engine.ProviderError("x", { retry: "never" });
/** A type with every question's options replaced by plain values (the pre-third-wave shape). */
type OldQuestions<T> = T extends { options?: (string | { value: string })[] } & { prompt: string }
  ? Omit<T, "options"> & { options?: string[] }
  : T extends (...args: infer A) => infer R ? (...args: A) => OldQuestions<R>
  : T extends Promise<infer P> ? Promise<OldQuestions<P>>
  : T extends AsyncIterable<unknown> ? T
  : T extends readonly (infer E)[] ? OldQuestions<E>[]
  : T extends object ? { [K in keyof T]: OldQuestions<T[K]> }
  : T;
type ServiceIsAssignable = OldQuestions<engine.ThreadService> extends Contract.ThreadService ? true
  : never;
type ViewIsAssignable = OldQuestions<engine.ThreadView> extends Contract.ThreadView ? true : never;
type HostIsAssignable = OldQuestions<engine.Host> extends Contract.Host ? true : never;
type EngineQuestion = NonNullable<engine.Interaction["questions"]>[number];
type QuestionIsWave3 = EngineQuestion extends Contract.QuestionWave3 ? true : never;
const wave3Question: QuestionIsWave3 = true;
const assignable: [ServiceIsAssignable, ViewIsAssignable, HostIsAssignable] = [true, true, true];

test("the public exports exist and match the contract's shapes", () => {
  for (const [name, value] of Object.entries(checks)) assert.equal(typeof value, "function", name);
  assert.equal(floretError.code, "invalid_input");
  assert.deepEqual(codes, [true, true]);
  assert.equal(providerError.retry, "never");
  assert.deepEqual(assignable, [true, true, true]);
  assert.equal(wave3Question, true);
});
