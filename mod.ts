/**
 * Floret: a durable engine for interactive AI agents on Deno, Bun and Node.
 *
 * A host opens the engine on a {@link KvStore}, gets a {@link ThreadService}
 * for an agent, and sends messages; the engine runs the model loop with tools
 * and keeps every fact in one append-only journal, so a crash loses nothing
 * accepted and never runs a side effect twice.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 *
 * const add = defineTool({
 *   name: "add",
 *   description: "Add two numbers",
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 * const gateway = scriptedGateway([
 *   { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
 *   { text: "2 + 3 = 5" },
 * ]);
 * const host = await openHost({ store: memoryStore() });
 * const threads = host.threads({ agent: defineAgent({ id: "calc", systemPrompt: "Add.", gateway, tools: [add] }) });
 * const { threadId } = await threads.create({ requestKey: "new-thread" });
 * await threads.send({ threadId, requestKey: "msg-1", input: { text: "What is 2 + 3?" } });
 * const view = await threads.waitForIdle(threadId);
 * console.log(view.items.map((item) => item.kind)); // ["user", "tool", "assistant"]
 * await host.shutdown();
 * ```
 *
 * @module
 */
export { FloretError, isFloretError } from "./src/errors.ts";
export type { ErrorCode, TurnFailureCode } from "./src/errors.ts";
export type {
  KvCommit,
  KvCommitResult,
  KvEntry,
  KvKey,
  KvKeyPart,
  KvListOptions,
  KvSelector,
  KvStore,
} from "./src/spi/kv_store.ts";
export { memoryStore } from "./adapters/storage/memory.ts";
export { ProviderError } from "./src/provider/provider_error.ts";
export type {
  ProviderErrorInit,
  ProviderErrorKind,
  ProviderFailureEvidence,
  RetryAdvice,
} from "./src/provider/provider_error.ts";
export type {
  Capabilities,
  FinishReason,
  Gateway,
  GatewayInfo,
  ImageAttachment,
  ProviderEvent,
  ProviderMessage,
  ProviderRequest,
  ProviderTool,
  ReasoningEffort,
  Usage,
} from "./src/provider/gateway.ts";
export type { CitedSource, HostedToolCall } from "./src/provider/gateway.ts";
export { defineTool } from "./src/tools/define_tool.ts";
export type { QuestionOption } from "./src/tools/question_shape.ts";
export type {
  PermissionContext,
  PermissionDecision,
  ToolContext,
  ToolDefinition,
  ToolEffect,
  ToolInput,
  ToolInputSchema,
  ToolResult,
  ToolSpec,
} from "./src/tools/define_tool.ts";
export { DEFAULT_MAX_STEPS, defineAgent } from "./src/config/agent.ts";
export type { Agent, AgentConfig, ContextSettings, SubagentLimits } from "./src/config/agent.ts";
export type { TokenCounter } from "./src/context/token_counter.ts";
export { DEFAULT_RETRY_DELAYS_MS } from "./src/config/retry_policy.ts";
export type {
  ProviderRetryPolicy,
  ProviderTimeouts,
  ResolvedRetryPolicy,
} from "./src/config/retry_policy.ts";
export { openHost } from "./src/runtime/host/host.ts";
export type { AgentSource, Host, HostOptions, StartupPhase } from "./src/runtime/host/host.ts";
export type { RestoreReport } from "./src/runtime/host/restore.ts";
export type { TitleState, TitleStatus } from "./src/projection/view/title_state.ts";
export { ACTIVITY_LIMITS } from "./src/tools/tool_activity.ts";
export type { ActivityRow, ToolActivity } from "./src/tools/tool_activity.ts";
export type { WebActivity, WebActivitySource } from "./src/tools/web_activity.ts";
export { MODEL_CATALOG_UPDATED, modelCatalog, modelInfo } from "./src/provider/model_catalog.ts";
export type { ModelInfo, ModelReasoningLevel } from "./src/provider/model_catalog.ts";
export type {
  LocalThreadService,
  ThreadService,
  ThreadServiceWave2,
} from "./src/runtime/host/thread_service.ts";
export type {
  InputContextItem,
  InputReference,
  UserInput,
} from "./src/runtime/commands/user_input.ts";
export type { CancelInput } from "./src/runtime/commands/cancel_command.ts";
export type { EditQueuedInput } from "./src/runtime/commands/queue_commands.ts";
// Long work (DESIGN §11): goals, queue steering, children's facts.
export type { ThreadServiceWave3 } from "./src/runtime/host/long_work_service.ts";
export type { Goal } from "./src/tools/goal_state.ts";
export type { ParentEvent } from "./src/subagents/parent_event_list.ts";
export type { CompactResult } from "./src/runtime/commands/compaction_command.ts";
export type { CompactionRecord } from "./src/projection/history/context_model.ts";
export type {
  ApprovalInteraction,
  Artifact,
  AssistantItem,
  ComponentOp,
  ContextFigures,
  Interaction,
  InteractionBase,
  InteractionItem,
  ItemBase,
  ItemKind,
  Question,
  QuestionInteraction,
  QueuedInput,
  RunProgress,
  ThinkingItem,
  ThreadItem,
  ThreadStatus,
  ThreadSummary,
  ThreadUpdate,
  ThreadView,
  Todo,
  ToolCallView,
  ToolItem,
  ToolItemStatus,
  TurnSummary,
  UsageTotals,
  UserItem,
  ViewComponents,
  ViewOp,
} from "./src/projection/view/view_types.ts";
export { applyUpdate } from "./src/projection/view/apply_update.ts";
export type {
  ObservationContext,
  ObservationDetails,
  ObservationEvent,
  ObservationOf,
  ObservationType,
  ObservedOutcome,
  ObservedToolStatus,
} from "./src/observation/events.ts";
export { consoleObserver, formatObservation } from "./src/observation/console_observer.ts";
export type { ConsoleObserverOptions } from "./src/observation/console_observer.ts";
