/**
 * Threads over HTTP: `threadApi` serves a ThreadService as a hono app (JSON
 * commands, server-sent events, and an AI SDK chat stream), and `threadClient`
 * is a ThreadService that calls such an app. The same program runs its
 * threads in-process or on a remote host by swapping one object.
 *
 * @example
 * ```ts
 * import { defineAgent, memoryStore, openHost } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * import { threadApi, threadClient } from "@floret/engine/http";
 *
 * const host = await openHost({ store: memoryStore() });
 * const local = host.threads({
 *   agent: defineAgent({ id: "a", systemPrompt: "Be brief.", gateway: scriptedGateway([{ text: "Hi!" }]) }),
 * });
 * const app = threadApi(local, { authorize: () => true });
 * // `fetch: app.fetch` talks to the app in-process; a real client passes a URL only.
 * const threads = threadClient({ baseUrl: "http://localhost", fetch: app.fetch });
 * const { threadId } = await threads.create({ requestKey: "c1" });
 * await threads.send({ threadId, requestKey: "m1", input: { text: "Hello" } });
 * console.log((await threads.waitForIdle(threadId)).items.at(-1)?.text); // "Hi!"
 * await host.shutdown();
 * ```
 *
 * @module
 */
export { threadApi } from "./thread_api.ts";
export type { AuthorizeCheck, ThreadApiOptions, ThreadApp } from "./thread_api.ts";
export type { AuthorizeVerdict } from "./tenancy.ts";
export type { HttpAction } from "./routes.ts";
export type { ChatRouteOptions } from "./chat_turn_stream.ts";
export { threadClient } from "./thread_client.ts";
export type { ThreadClientOptions } from "./thread_client.ts";

// The engine types this entry's functions take and return, re-exported so its
// documentation is complete on its own (deno doc --lint, JSR); the same types
// as `@floret/engine`.
export type {
  ActivityRow,
  ApprovalInteraction,
  Artifact,
  AssistantItem,
  CancelInput,
  CompactionRecord,
  CompactResult,
  ComponentOp,
  ContextFigures,
  EditQueuedInput,
  Goal,
  ImageAttachment,
  InputContextItem,
  InputReference,
  Interaction,
  InteractionBase,
  InteractionItem,
  ItemBase,
  LocalThreadService,
  ParentEvent,
  Question,
  QuestionInteraction,
  QuestionOption,
  QueuedInput,
  RunProgress,
  ThinkingItem,
  ThreadItem,
  ThreadService,
  ThreadServiceWave2,
  ThreadServiceWave3,
  ThreadStatus,
  ThreadSummary,
  ThreadUpdate,
  ThreadView,
  TitleStatus,
  Todo,
  ToolActivity,
  ToolCallView,
  ToolItem,
  ToolItemStatus,
  TurnFailureCode,
  TurnSummary,
  Usage,
  UsageTotals,
  UserInput,
  UserItem,
  ViewComponents,
  ViewOp,
  WebActivity,
  WebActivitySource,
} from "@floret/engine";
