/**
 * The "children" capability a run's built-in tools use: start, wait for,
 * look at and cancel the child threads of the thread that runs them. It is
 * built once per ThreadService over that service's context, so built-in
 * tools reach threads through the same commands a host uses, never through
 * a global.
 *
 * @module
 */
import type { Agent } from "../config/agent.ts";
import { FloretError } from "../errors.ts";
import { cancel } from "../runtime/commands/cancel_command.ts";
import { waitForIdle } from "../runtime/queries/queries.ts";
import type { ServiceContext } from "../runtime/commands/service_context.ts";
import type { ThreadView } from "../projection/view/view_types.ts";
import { cancelDescendants } from "./cascade.ts";
import { childPreview, childReport, type ChildStatus, childStatus } from "./child_status.ts";
import { spawnChild, type SpawnOutcome, type SpawnRequest } from "./spawn.ts";

/** `wait_agents` waits this long unless told otherwise. */
export const DEFAULT_WAIT_MS = 5 * 60_000;
/** `wait_agents` never waits longer than this. */
export const MAX_WAIT_MS = 30 * 60_000;

/** One child in a `wait_agents` answer. */
export interface WaitedChild {
  threadId: string;
  status: ChildStatus;
  report?: string;
}

/** One child in an `inspect_agent` answer. */
export interface InspectedChild {
  threadId: string;
  status: ChildStatus;
  preview?: string;
}

/** What a tool call tells the capability about its caller. */
export interface Caller {
  /** The parent thread (the one running the tool). */
  threadId: string;
  /** The parent's call id: it keys spawns and cancels. */
  callId: string;
  signal: AbortSignal;
}

/** Start, wait for, inspect and cancel the children of the calling thread. */
export class ChildThreads {
  readonly #ctx: ServiceContext;
  /** Spawns of one parent run one after another, so the live-children bound holds within a batch. */
  readonly #spawning = new Map<string, Promise<unknown>>();

  /** @param ctx the service whose threads these are */
  constructor(ctx: ServiceContext) {
    this.#ctx = ctx;
  }

  /** Starts (or finds again, by call id) a child running one of `agent`'s subagents. */
  spawn(caller: Caller, agent: Agent, request: SpawnRequest): Promise<SpawnOutcome> {
    request = this.#withoutSecrets(caller, request);
    const before = this.#spawning.get(caller.threadId) ?? Promise.resolve();
    const next = before.catch(() => {}).then(() =>
      spawnChild(this.#ctx, { threadId: caller.threadId, callId: caller.callId, agent }, request)
    );
    this.#spawning.set(caller.threadId, next);
    void next.catch(() => {}).finally(() => {
      if (this.#spawning.get(caller.threadId) === next) this.#spawning.delete(caller.threadId);
    });
    return next;
  }

  /**
   * The request with the secret answers the caller's run holds redacted. A secret lives
   * only in the requests of the run that received it (DESIGN §11 "Secrets stay out"); a
   * child is another thread, whose task and title are stored, so it never gets one.
   */
  #withoutSecrets(caller: Caller, request: SpawnRequest): SpawnRequest {
    const run = this.#ctx.actors.loaded(caller.threadId)?.run;
    if (!run?.holdsSecrets) return request;
    const kept: SpawnRequest = { ...request, task: run.redact(request.task) };
    if (request.title !== undefined) kept.title = run.redact(request.title);
    return kept;
  }

  /**
   * Waits until every child is idle or waiting, or the time is up, and
   * reports each child's status (and report, once it is not running).
   *
   * @throws {FloretError} `thread_not_found` when an id is not a child of the caller
   */
  async wait(caller: Caller, threadIds: string[], timeoutMs: number): Promise<WaitedChild[]> {
    await Promise.all(threadIds.map((id) => this.#childView(caller, id)));
    await Promise.all(threadIds.map(async (id) => {
      try {
        await waitForIdle(this.#ctx, id, { timeoutMs, signal: caller.signal });
      } catch (error) {
        // Out of time: the answer says which children still run.
        if (!(error instanceof FloretError && error.code === "timeout")) throw error;
      }
    }));
    return await Promise.all(threadIds.map(async (threadId) => {
      const view = await this.#childView(caller, threadId);
      const waited: WaitedChild = { threadId, status: childStatus(view) };
      const report = waited.status === "running" ? undefined : childReport(view);
      if (report !== undefined) waited.report = report;
      return waited;
    }));
  }

  /** The child's status and a short preview, without waiting. */
  async inspect(caller: Caller, threadId: string): Promise<InspectedChild> {
    const view = await this.#childView(caller, threadId);
    const inspected: InspectedChild = { threadId, status: childStatus(view) };
    const preview = childPreview(view);
    if (preview !== undefined) inspected.preview = preview;
    return inspected;
  }

  /** Cancels the child and all its descendants; returns the child's status after the stop. */
  async cancel(caller: Caller, threadId: string): Promise<InspectedChild> {
    await this.#childView(caller, threadId);
    const command = { threadId, requestKey: `cancel_agent/${caller.callId}` };
    await cancel(this.#ctx, command);
    await cancelDescendants(this.#ctx, command);
    return { threadId, status: childStatus(await this.#childView(caller, threadId)) };
  }

  async #childView(caller: Caller, threadId: string): Promise<ThreadView> {
    const view = (await this.#ctx.actors.fresh(threadId)).snapshot();
    if (view.parentThreadId !== caller.threadId) {
      throw new FloretError("thread_not_found", `Not a child of this thread: ${threadId}`);
    }
    return view;
  }
}
