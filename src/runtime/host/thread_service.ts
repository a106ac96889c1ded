/**
 * The ThreadService: the host's one entry point for commands and queries.
 * It validates input before any I/O, routes each command to its thread's
 * actor, and never exposes internals.
 *
 * @module
 */
import type { ZodType } from "zod";
import type { Agent } from "../../config/agent.ts";
import { describeThrown } from "../../engine/run/host_code.ts";
import { FloretError } from "../../errors.ts";
import { cancel, type CancelInput } from "../commands/cancel_command.ts";
import { cancelDescendants } from "../../subagents/cascade.ts";
import { commandSchemas, querySchemas } from "../../validation/command_schemas.ts";
import { fastCreate, fastSend } from "../../validation/command_fast_paths.ts";
import { parseInput, parseThreadId as checkId } from "../../validation/parse_input.ts";
import { respond } from "../commands/interaction_commands.ts";
import { steer } from "../commands/steer_command.ts";
import { compact, type CompactResult } from "../commands/compaction_command.ts";
import { figuresAgent } from "../queries/figures_agent.ts";
import { fork } from "../commands/fork_command.ts";
import { artifact, context, history, list, waitForIdle } from "../queries/queries.ts";
import { deleteQueued, editQueued, type EditQueuedInput } from "../commands/queue_commands.ts";
import type { ServiceContext } from "../commands/service_context.ts";
import { create, deleteThread, setTitle } from "../commands/thread_commands.ts";
import { promoteQueued, retry, send } from "../commands/turn_commands.ts";
import type {
  Artifact,
  ContextFigures,
  ThreadItem,
  ThreadSummary,
  ThreadUpdate,
  ThreadView,
} from "../../projection/view/view_types.ts";
import type { UserInput } from "../commands/user_input.ts";
import type { ThreadServiceWave3 } from "./long_work_service.ts";
import { longWorkSchemas } from "../../validation/long_work_schemas.ts";
import { deleteGoal, setGoal, submitGoal } from "../../goals/goal_commands.ts";
import { steerQueued } from "../commands/queue_steer.ts";
import { listParentEvents } from "../../subagents/parent_event_list.ts";

/** Commands and queries on threads. Every mutation takes a request key and is idempotent by it. */
export interface ThreadService {
  /** Creates an empty thread. */
  /**
   * Creates an empty thread; with `tenant`, the thread belongs to that tenant
   * and the request key is scoped to it.
   */
  create(
    input: { requestKey: string; title?: string; tenant?: string },
  ): Promise<{ threadId: string; view: ThreadView }>;
  /** Admits a turn (returns once admitted, before any provider call) or queues the input while busy. */
  send(input: {
    threadId: string;
    requestKey: string;
    input: UserInput;
    supplementalContext?: { title: string; text: string }[];
    /**
     * Run labels (at most 16 string pairs): the turn keeps them (retries and
     * restarts too) and they reach `ToolContext.labels`, permission functions,
     * `ProviderRequest.labels` (never sent to the model) and observations.
     */
    labels?: Record<string, string> | undefined;
  }): Promise<{ threadId: string; turnId?: string; queued: boolean; view: ThreadView }>;
  /** Resolves a pending approval or question. */
  respond(input: {
    threadId: string;
    requestKey: string;
    interactionId: string;
    decision?: "approve" | "deny";
    answers?: { questionId: string; value: string }[];
  }): Promise<{ view: ThreadView }>;
  /**
   * Stops the turn under way (running or waiting); idempotent, a no-op on an
   * idle thread. With `includeDescendants`, returns once every child thread's
   * stop (and their children's) is committed too.
   */
  cancel(input: CancelInput): Promise<{ view: ThreadView }>;
  /** Resumes a failed latest turn, or regenerates a completed one. */
  retry(
    input: { threadId: string; requestKey: string; turnId?: string },
  ): Promise<{ turnId: string; view: ThreadView }>;
  /** A new thread reading this one's history up to an item. */
  fork(
    input: { threadId: string; requestKey: string; atItemId?: string },
  ): Promise<{ threadId: string; view: ThreadView }>;
  /** Deletes a thread and its child threads. */
  delete(input: { threadId: string; requestKey: string }): Promise<void>;
  /** Sets the title. */
  setTitle(
    input: { threadId: string; requestKey: string; title: string },
  ): Promise<{ view: ThreadView }>;
  /** The current view. */
  view(threadId: string): Promise<ThreadView>;
  /**
   * Root threads, most recently updated first; with `parentThreadId`, that
   * thread's children; with `tenant`, only that tenant's threads.
   */
  list(
    options?: { limit?: number; cursor?: string; parentThreadId?: string; tenant?: string },
  ): Promise<{ threads: ThreadSummary[]; cursor?: string }>;
  /** A page of items, newest last. */
  history(
    threadId: string,
    options?: { limit?: number; before?: string },
  ): Promise<{ items: ThreadItem[]; before?: string; hasMore: boolean }>;
  /** Live updates; registers at once. */
  subscribe(threadId: string, options?: { signal?: AbortSignal }): AsyncIterable<ThreadUpdate>;
  /** Starts a queued input now. */
  promoteQueued(
    input: { threadId: string; requestKey: string; queueId: string },
  ): Promise<{ turnId: string; view: ThreadView }>;
  /** Removes a queued input; with `expectedText`, only while it still reads so (else `request_conflict`). */
  deleteQueued(
    input: { threadId: string; requestKey: string; queueId: string; expectedText?: string },
  ): Promise<{ view: ThreadView }>;
  /**
   * Manual compaction; an explicit no-op below the target size. `noop` also
   * answers a compaction that installed nothing, whose record (`compaction`)
   * then says `failed`.
   */
  compact(
    input: { threadId: string; requestKey: string; continueGoal?: boolean },
  ): Promise<CompactResult>;
  /** Context window figures. */
  context(threadId: string): Promise<ContextFigures>;
  /** The full output of a tool call that reached the model shortened (see a tool item's `artifactId`). */
  artifact(threadId: string, artifactId: string): Promise<Artifact>;
  /** Resolves once the thread is idle or waiting for an interaction. */
  waitForIdle(
    threadId: string,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<ThreadView>;
}

/**
 * Control of a turn under way, on the in-process service that
 * `host.threads()` returns (the HTTP API of http.md does not route these).
 */
export interface ThreadServiceWave2 {
  /** A durable instruction for the turn under way: it ends the provider request in flight and joins the next one. */
  steer(
    input: { threadId: string; requestKey: string; text: string },
  ): Promise<{ view: ThreadView }>;
  /** Replaces a queued input's text; `expectedText` must equal the current text (else `request_conflict`). */
  editQueued(input: EditQueuedInput): Promise<{ view: ThreadView }>;
  /** The full output of a tool call that reached the model shortened. */
  artifact(threadId: string, artifactId: string): Promise<Artifact>;
  /** Stops the turn under way; `includeDescendants` also stops child threads. */
  cancel(input: CancelInput): Promise<{ view: ThreadView }>;
}

/** The service `host.threads()` returns: every command and query, turn control included. */
export type LocalThreadService = ThreadService & ThreadServiceWave2 & ThreadServiceWave3;

/**
 * Builds the service over a shared context.
 *
 * @param ctx journal, actors and run wiring
 * @param staticAgent the agent when the host passed `{ agent }` (for context figures)
 */
export function createThreadService(
  ctx: ServiceContext,
  staticAgent?: Agent,
): LocalThreadService {
  // Every failure, validation included, arrives as a rejected promise, and
  // as a FloretError: the one place a stray error is given a code.
  // Not async: each command would pay an async frame and an await more than it needs.
  // Two plain parameters rather than a rest array spread into the call (every
  // command and query takes one or two): no array per call.
  const guarded = <A, B, R>(fn: (a: A, b: B) => Promise<R>) => (a: A, b?: B): Promise<R> => {
    let result: Promise<R>;
    try {
      ctx.assertOpen();
      result = fn(a, b as B);
    } catch (error) {
      return Promise.reject(asFloretError(error));
    }
    return result.then(undefined, rethrowAsFloretError);
  };

  /** A long-work command: its input checked against its own schema, then run. */
  const checked = <I, R>(
    schema: ZodType<I>,
    what: string,
    run: (ctx: ServiceContext, input: I) => Promise<R>,
  ) => guarded((input: unknown) => run(ctx, parseInput(schema, input, `${what} input`)));

  const waitGuarded = guarded((
    threadId: string,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ) =>
    waitForIdle(
      ctx,
      checkId(threadId),
      // Omitted options are what the optional schema passes through unchanged.
      options === undefined
        ? undefined
        : parseInput(querySchemas.waitForIdle, options, "waitForIdle options"),
    )
  );

  return {
    // The two commands of every conversation check their common input directly.
    create: guarded((input) =>
      create(ctx, parseInput(commandSchemas.create, input, "create input", fastCreate))
    ),
    send: guarded((input) =>
      send(ctx, parseInput(commandSchemas.send, input, "send input", fastSend))
    ),
    respond: guarded((input) => respond(ctx, parseCommand("respond", input))),
    cancel: guarded(async (input) => {
      const command = parseCommand("cancel", input);
      const result = await cancel(ctx, command);
      if (!command.includeDescendants) return result;
      await cancelDescendants(ctx, command);
      return { view: (await ctx.actors.get(command.threadId)).snapshot() };
    }),
    steer: guarded((input) => steer(ctx, parseCommand("steer", input))),
    editQueued: guarded((input) =>
      editQueued(ctx, parseInput(longWorkSchemas.editQueued, input, "editQueued input"))
    ),
    retry: guarded((input) => retry(ctx, parseCommand("retry", input))),
    fork: guarded((input) => fork(ctx, parseCommand("fork", input))),
    delete: guarded((input) => deleteThread(ctx, parseCommand("delete", input))),
    setTitle: guarded((input) => setTitle(ctx, parseCommand("setTitle", input))),
    view: guarded(async (threadId) => {
      const actor = await ctx.actors.fresh(checkId(threadId));
      if (actor.agent === undefined) {
        const agent = figuresAgent(ctx.runs, actor.record);
        const known = agent instanceof Promise ? await agent : agent;
        if (known) actor.knowAgent(known);
      }
      return actor.snapshot();
    }),
    list: guarded((options) => {
      const { parentThreadId, ...page } = parseInput(querySchemas.list, options, "list options") ??
        {};
      return list(
        ctx,
        parentThreadId === undefined ? page : { ...page, parentThreadId: checkId(parentThreadId) },
      );
    }),
    history: guarded((threadId, options) =>
      history(ctx, checkId(threadId), parseInput(querySchemas.history, options, "history options"))
    ),
    subscribe: (threadId, options) => {
      ctx.assertOpen();
      const id = checkId(threadId);
      const { signal } = parseInput(querySchemas.signalOnly, options, "subscribe options") ?? {};
      const updates = ctx.actors.publisher(id).subscribe(signal);
      // Fresh, not only loaded: a thread another host deleted is thread_not_found here too.
      const exists = ctx.actors.fresh(id);
      exists.catch(() => {
        updates.return?.();
        ctx.actors.dropUnobserved(id);
      });
      return {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            await exists;
            return updates.next();
          },
          return: () => updates.return!(),
        }),
      };
    },
    promoteQueued: guarded((input) => promoteQueued(ctx, parseCommand("queueItem", input))),
    deleteQueued: checked(longWorkSchemas.deleteQueued, "deleteQueued", deleteQueued),
    compact: checked(longWorkSchemas.compact, "compact", compact),
    setGoal: checked(longWorkSchemas.setGoal, "setGoal", setGoal),
    deleteGoal: checked(longWorkSchemas.deleteGoal, "deleteGoal", deleteGoal),
    submitGoal: checked(longWorkSchemas.setGoal, "submitGoal", submitGoal),
    steerQueued: checked(longWorkSchemas.steerQueued, "steerQueued", steerQueued),
    listParentEvents: guarded((threadId, options) =>
      listParentEvents(
        ctx,
        checkId(threadId),
        parseInput(longWorkSchemas.parentEvents, options ?? {}, "listParentEvents options"),
      )
    ),
    context: guarded((threadId) =>
      context(
        ctx,
        checkId(threadId),
        // A factory host's thread keeps the agent its last run here had; a one-agent host
        // answers from its agent (a child from its sub-agent) without waiting.
        (record, lastRun) =>
          staticAgent || lastRun === undefined ? figuresAgent(ctx.runs, record) : lastRun,
      )
    ),
    waitForIdle: (threadId, options) =>
      // Without options there is no signal of the caller's to tell apart.
      options === undefined
        ? waitGuarded(threadId, options)
        : waitGuarded(threadId, options).catch((error: unknown) => {
          // The caller's own abort rejects with its signal's reason, as fetch
          // does (and as threadClient does): it is no engine failure.
          const signal = (options as { signal?: unknown } | undefined)?.signal;
          if (
            signal instanceof AbortSignal && signal.aborted && error instanceof FloretError &&
            error.cause === signal.reason
          ) throw signal.reason;
          throw error;
        }),
    artifact: guarded((threadId, artifactId) => artifact(ctx, checkId(threadId), artifactId)),
  };
}

/** Parses a command's input with its schema (one entry per command in `commandSchemas`). */
function parseCommand<K extends keyof typeof commandSchemas>(
  name: K,
  input: unknown,
): typeof commandSchemas[K] extends ZodType<infer T> ? T : never {
  const schema: ZodType<unknown> = commandSchemas[name];
  return parseInput(schema, input, `${name} input`) as never;
}

function rethrowAsFloretError(error: unknown): never {
  throw asFloretError(error);
}

/**
 * Any error a command lets through as a {@link FloretError}. Store and
 * validation failures already are; anything else is an engine failure while
 * talking to the store, reported as `storage_failure` with its cause kept.
 */
function asFloretError(error: unknown): FloretError {
  if (error instanceof FloretError) return error;
  return new FloretError(
    "storage_failure",
    `The command failed inside the engine: ${describeThrown(error)}`,
    { cause: error },
  );
}
