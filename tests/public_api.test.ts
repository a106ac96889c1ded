/**
 * The real exports must be assignable to the public contract, whose snapshot
 * is tests/contract/public-api.d.ts. This file fails type-checking (tsc, deno
 * check) when they drift; the runtime test only confirms the exports exist.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type * as Contract from "./contract/public-api.d.ts";
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
  // The third wave adds the failure code `request_too_large` and the tool
  // status `uncertain` (comments in the contract's third-wave section, not yet
  // in its unions) and widens question options to `string | { value,
  // description }` (Contract.QuestionWave3): views are compared with those set
  // aside (WithoutWave3, OldQuestions below), and questions against QuestionWave3.
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
  threadClient: threadClient as unknown as typeof checks.threadClient,
};

// Classes: instances must satisfy the contract's declarations.
// The engine's codes are the contract's plus the three that only a remote client
// reports (http.md: `forbidden`, `not_found`, and `internal` for a 500).
type ContractCodesKept = Contract.ErrorCode extends engine.ErrorCode ? true : never;
type OnlyRemoteCodesAdded = Exclude<engine.ErrorCode, Contract.ErrorCode> extends
  "forbidden" | "not_found" | "internal" ? true : never;
const codes: [ContractCodesKept, OnlyRemoteCodesAdded] = [true, true];
type ContractFailuresKept = Contract.TurnFailureCode extends engine.TurnFailureCode ? true : never;
type OnlyWave3FailuresAdded = Exclude<engine.TurnFailureCode, Contract.TurnFailureCode> extends
  "request_too_large" ? true : never;
const failureCodes: [ContractFailuresKept, OnlyWave3FailuresAdded] = [true, true];
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
type EngineQuestion = NonNullable<engine.Interaction["questions"]>[number];
type QuestionIsWave3 = EngineQuestion extends Contract.QuestionWave3 ? true : never;
const wave3Question: QuestionIsWave3 = true;
// The turn surface: user input with references and context; run labels on tools and sends.
type InputIsWave3 = engine.UserInput extends Contract.UserInputWave3 ? true : never;
type ToolContextHasLabels = engine.ToolContext extends { labels: Record<string, string> } ? true
  : never;
type SendTakesLabels = { labels: Record<string, string> } extends
  Pick<Parameters<engine.ThreadService["send"]>[0], "labels"> ? true : never;
const turnSurface: [InputIsWave3, ToolContextHasLabels, SendTakesLabels] = [true, true, true];
/**
 * A view with the third wave's additions to two unions set aside: the failure
 * code `request_too_large` and the tool status `uncertain` (both comments in
 * the contract's third-wave section, not yet in its unions).
 */
type WithoutWave3<
  V extends {
    turns: { failure?: { code: string } }[];
    items: { tool?: { status: string } }[];
  },
> = Omit<V, "turns" | "items"> & {
  turns: (Omit<V["turns"][number], "failure"> & {
    failure?: Omit<NonNullable<V["turns"][number]["failure"]>, "code"> & {
      code: Exclude<engine.TurnFailureCode, "request_too_large">;
    };
  })[];
  items: (Omit<V["items"][number], "tool"> & {
    tool?: Omit<NonNullable<V["items"][number]["tool"]>, "status"> & {
      status: Exclude<NonNullable<V["items"][number]["tool"]>["status"], "uncertain">;
    };
  })[];
};
// Every method returns views, so the service is checked by its method names here
// (and each method's view through ViewIsAssignable).
type ServiceIsAssignable = keyof Contract.ThreadService extends keyof engine.ThreadService ? true
  : never;
type ViewIsAssignable = OldQuestions<WithoutWave3<engine.ThreadView>> extends Contract.ThreadView
  ? true
  : never;
type HostIsAssignable = Omit<engine.Host, "threads"> extends Omit<Contract.Host, "threads"> ? true
  : never;
const assignable: [ServiceIsAssignable, ViewIsAssignable, HostIsAssignable] = [true, true, true];

test("the public exports exist and match the contract's shapes", () => {
  for (const [name, value] of Object.entries(checks)) assert.equal(typeof value, "function", name);
  assert.equal(floretError.code, "invalid_input");
  assert.deepEqual(codes, [true, true]);
  assert.deepEqual(failureCodes, [true, true]);
  assert.equal(providerError.retry, "never");
  assert.deepEqual(assignable, [true, true, true]);
  assert.equal(wave3Question, true);
  assert.deepEqual(turnSurface, [true, true, true]);
});
