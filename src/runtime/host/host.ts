/**
 * The Host: the composition root. It owns the store, settles what a previous
 * process left unfinished before any command can reach it, builds the one
 * ThreadService, and shuts everything down in order.
 *
 * @module
 */
import { nowIso, useClock } from "../../journal/now_iso.ts";
import { useIdSource } from "../../identity/ids.ts";
import { type Agent, isAgent } from "../../config/agent.ts";
import { FloretError } from "../../errors.ts";
import { querySchemas } from "../../validation/command_schemas.ts";
import { hostOptionsSchema } from "../../validation/config_schemas.ts";
import { parseInput } from "../../validation/parse_input.ts";
import { Journal } from "../../journal/journal.ts";
import { DEFAULT_STORE_TIMEOUT_MS } from "../../journal/bounded_store.ts";
import { type ObservationEvent, safeObserver } from "../../observation/events.ts";
import type { KvStore } from "../../spi/kv_store.ts";
import { ActorCache } from "../turns/actor_cache.ts";
import { recoverThreads } from "./recovery.ts";
import type { ServiceContext } from "../commands/service_context.ts";
import { LeaseKeeper } from "./lease_keeper.ts";
import { DEFAULT_HOST_ID, DEFAULT_LEASE_TTL_MS, type Ownership } from "../actor/ownership.ts";
import { ChildThreads } from "../../subagents/children.ts";
import { childAwareResolver } from "../../subagents/agent_resolution.ts";
import { goalEquipment } from "../../goals/goal_tool.ts";
import { subagentEquipment } from "../../subagents/equip.ts";
import { childEventCollector } from "../../subagents/parent_events.ts";
import { createThreadService, type LocalThreadService } from "./thread_service.ts";
import { ExecutionGate } from "../commands/execution_gate.ts";
import { prepareRestore, type RestoreReport } from "./restore.ts";
import { settleTitleClaims, TitleJobs } from "../turns/titles.ts";

/** Where a turn's agent comes from. */
export type AgentSource =
  | { agent: Agent }
  | { agentFactory: (request: { threadId: string; turnId: string }) => Agent | Promise<Agent> };

/** An engine instance over one store. */
export interface Host {
  /** The ThreadService; the same options return the same service. */
  threads(options: AgentSource): LocalThreadService;
  /** Stops admission, aborts running work, waits for it (bounded by `signal`), closes the store. */
  shutdown(options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Ends deferred execution (`deferExecution: true`): settles what a previous
   * process left unfinished, then lets commands start runs. Resolves at once
   * on a host that was not deferred; calls share one activation.
   */
  activate(): Promise<void>;
  /**
   * For a store restored from a backup, on a deferred host before
   * `activate()`: stops unfinished turns (`interrupted`, failure code
   * `restored_turn`, never retryable), releases pending interactions as
   * cancelled, and moves queued inputs to `view.restoredInputs`. Idempotent:
   * a second call finds nothing left and reports zeros.
   *
   * @throws {FloretError} `invalid_input` on a host that is not deferred or is already activating
   */
  prepareRestore(): Promise<RestoreReport>;
}

/** A startup phase reported to `onStartup`. */
export type StartupPhase = "migrating" | "verifying";

/** Options of {@link openHost}. */
export interface HostOptions {
  /** Where the journal lives. */
  store: KvStore;
  /** Sanitised observation events for logs and metrics. */
  onEvent?: ((event: ObservationEvent) => void) | undefined;
  /**
   * Identifies this host among hosts that share the store; keep it stable
   * across restarts of the same slot (e.g. the server's name). At open, turns
   * left by this id are settled at once; other hosts' turns only once their
   * lease lapsed. Default `"default"`: fine for one host per store.
   */
  hostId?: string | undefined;
  /** How long a host's claim on a running turn lasts without renewal. Default 30 s. */
  leaseTtlMs?: number | undefined;
  /**
   * Open without executing: reads and bookkeeping commands work, commands
   * that would start a run answer `execution_deferred` until `activate()`.
   * Unfinished turns are settled at activation, not at open (so that
   * `prepareRestore()` can stop them as restored instead).
   */
  deferExecution?: boolean | undefined;
  /**
   * Told each startup phase as it begins, synchronously, before `openHost`
   * resolves: `migrating` only while a store written by an older schema is
   * upgraded (a fresh or current store never reports it), then `verifying`
   * (unfinished work is looked for and, unless deferred, settled).
   */
  onStartup?: ((phase: StartupPhase) => void) | undefined;
  /**
   * Allocates every id the engine makes (threads, turns, runs, interactions…),
   * for reproducible tests: `sequentialIds(prefix)` from
   * `@floret/engine/testing`. Each answer must be new, non-empty and free of
   * `:`. Process-wide while this host is open; leave it unset in production.
   */
  ids?: (() => string) | undefined;
  /**
   * The time every stored timestamp reads, for reproducible tests:
   * `manualClock(startIso)` from `@floret/engine/testing`. Timers, leases and
   * timeouts keep real time. Process-wide while this host is open.
   */
  clock?: { now(): number } | undefined;
  /**
   * The deadline of every store call the engine awaits, in ms (an integer
   * from 1 to 2^31−1). Past it the command fails `storage_failure` and the
   * thread settles once the store answers again; `openHost` itself is bounded
   * the same way. Default 30 000.
   */
  storeTimeoutMs?: number | undefined;
}

/**
 * Opens the engine on a store. Threads a previous process left running are
 * settled first (interrupted, or failed with `effect_outcome_unknown`);
 * nothing resumes by itself.
 *
 * @param options the store and an optional observer
 * @returns the host
 * @throws {FloretError} `store_too_new`, `storage_failure`, or `invalid_input` for a bad store
 * @example
 * ```ts
 * import { defineAgent, memoryStore, openHost } from "@floret/engine";
 * import { scriptedGateway } from "@floret/engine/testing";
 * const host = await openHost({ store: memoryStore() });
 * const threads = host.threads({
 *   agent: defineAgent({ id: "demo", systemPrompt: "Be brief.", gateway: scriptedGateway([{ text: "Hello!" }]) }),
 * });
 * const { threadId } = await threads.create({ requestKey: "create-1" });
 * await threads.send({ threadId, requestKey: "send-1", input: { text: "Hi" } });
 * console.log((await threads.waitForIdle(threadId)).items.at(-1)?.text); // "Hello!"
 * await host.shutdown();
 * ```
 */
export async function openHost(options: HostOptions): Promise<Host> {
  parseInput(hostOptionsSchema, options, "openHost options");
  const hostId = options.hostId ?? DEFAULT_HOST_ID;
  const leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  if (typeof hostId !== "string" || hostId.trim() === "" || hostId.length > 256) {
    throw new FloretError(
      "invalid_input",
      "hostId must be a non-empty string of at most 256 characters",
    );
  }
  if (!Number.isFinite(leaseTtlMs) || leaseTtlMs < 30) {
    throw new FloretError(
      "invalid_input",
      `leaseTtlMs must be a number of at least 30: ${leaseTtlMs}`,
    );
  }
  const { deferExecution = false, onStartup } = options;
  if (typeof deferExecution !== "boolean") {
    throw new FloretError("invalid_input", "deferExecution must be a boolean");
  }
  if (onStartup !== undefined && typeof onStartup !== "function") {
    throw new FloretError("invalid_input", "onStartup must be a function");
  }
  const ownership: Ownership = { hostId, leaseTtlMs };
  const observe = safeObserver(options.onEvent);
  const phase = (name: StartupPhase): void => {
    try {
      onStartup?.(name);
    } catch {
      // A progress callback must not decide whether the store opens.
    }
  };
  if (options.ids !== undefined) useIdSource(options.ids);
  if (options.clock !== undefined) useClock(options.clock);
  // "migrating" is told only when a migration runs: this engine's store
  // schema has had none, so a fresh or current store reports "verifying" alone.
  const journal = await Journal.open(
    options.store,
    options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
  );
  phase("verifying");
  const host = new EngineHost(journal, ownership, observe, options.onEvent !== undefined, {
    deferred: deferExecution,
  });
  if (options.ids !== undefined || options.clock !== undefined) {
    // Another test in the same process must not inherit this host's ids or time.
    host.released = () => {
      if (options.ids !== undefined) useIdSource(undefined);
      if (options.clock !== undefined) useClock(undefined);
    };
  }
  if (!deferExecution) await host.recover();
  return host;
}

/** How long `shutdown()` without a signal waits for runs that ignore their abort. */
export const SHUTDOWN_WAIT_MS = 8_000;

/**
 * The longest `shutdown()` without a signal takes, whatever hangs (host code
 * ignoring its abort, a store whose `close()` never answers).
 */
export const SHUTDOWN_LIMIT_MS = 10_000;

class EngineHost implements Host {
  readonly #journal: Journal;
  readonly #observe: (event: ObservationEvent) => void;
  readonly #observing: boolean;
  readonly #actors: ActorCache;
  readonly #leases: LeaseKeeper;
  #closed = false;
  #shutdown: Promise<void> | undefined;
  #service: { source: AgentSource; service: LocalThreadService } | undefined;
  readonly #ownership: Ownership;
  readonly #gate: ExecutionGate;
  readonly #titles: TitleJobs;

  constructor(
    journal: Journal,
    ownership: Ownership,
    observe: (event: ObservationEvent) => void,
    observing: boolean,
    lifecycle: { deferred: boolean },
  ) {
    this.#journal = journal;
    this.#observe = observe;
    this.#observing = observing;
    this.#ownership = ownership;
    this.#actors = new ActorCache(journal, ownership);
    this.#leases = new LeaseKeeper(this.#actors, ownership);
    this.#gate = new ExecutionGate(lifecycle.deferred);
    this.#titles = new TitleJobs(this.#actors, observe);
  }

  /** Settles what a previous process left: unfinished turns, then title claims. */
  async recover(): Promise<void> {
    await recoverThreads(this.#journal, this.#ownership, this.#observe);
    await settleTitleClaims(this.#journal, this.#ownership, false);
  }

  activate(): Promise<void> {
    if (this.#closed) return Promise.reject(new FloretError("host_closed", "Host is shut down"));
    return this.#gate.activate(async () => {
      await this.recover();
      // Reads may have loaded actors before recovery wrote: they catch up (and wake their waiters).
      for (const actor of this.#actors.all()) await actor.exclusive(() => actor.sync());
      this.#observe({ type: "host.activated", at: nowIso() });
    });
  }

  async prepareRestore(): Promise<RestoreReport> {
    if (this.#closed) throw new FloretError("host_closed", "Host is shut down");
    if (!this.#gate.deferred || this.#gate.activating) {
      throw new FloretError(
        "invalid_input",
        "prepareRestore needs a host opened with deferExecution that is not activated yet",
      );
    }
    const report = await prepareRestore(this.#journal, this.#actors, this.#ownership);
    this.#observe({ type: "host.restore_prepared", at: nowIso(), ...report });
    return report;
  }

  threads(options: AgentSource): LocalThreadService {
    if (this.#closed) throw new FloretError("host_closed", "Host is shut down");
    const source = typeof options === "object" && options !== null ? options : undefined;
    const agent = source && "agent" in source ? source.agent : undefined;
    const factory = source && "agentFactory" in source ? source.agentFactory : undefined;
    if (agent !== undefined ? !isAgent(agent) : typeof factory !== "function") {
      throw new FloretError(
        "invalid_input",
        "threads() needs { agent } (made by defineAgent) or { agentFactory }",
      );
    }
    if (this.#service) {
      const known = this.#service.source;
      const same = "agent" in known ? known.agent === agent : known.agentFactory === factory;
      if (!same) {
        throw new FloretError(
          "invalid_input",
          "This host already has a ThreadService with other options",
        );
      }
      return this.#service.service;
    }
    const resolveRoot = async (threadId: string, turnId: string): Promise<Agent> => {
      if (agent) return agent;
      let made: unknown;
      try {
        made = await withinFactoryLimit(factory!({ threadId, turnId }));
      } catch (cause) {
        if (cause instanceof FloretError) throw cause;
        throw new FloretError("invalid_input", "agentFactory failed", { cause });
      }
      if (!isAgent(made)) {
        throw new FloretError(
          "invalid_input",
          "agentFactory must return an agent made by defineAgent",
        );
      }
      return made;
    };
    const ctx: ServiceContext = {
      journal: this.#journal,
      actors: this.#actors,
      runs: {
        observe: this.#observe,
        observing: this.#observing,
        resolveAgent: childAwareResolver(this.#journal, resolveRoot),
        // The resolver's own answer for a root thread (or one without a sub-agent id) of a
        // host with one agent, without its two async frames: every admission asks.
        agentNow: agent === undefined
          ? undefined
          : (known) => !known.parentThreadId || known.agentId === undefined ? agent : undefined,
        titleClaimed: (threadId, agent, input, generation) =>
          this.#titles.start(threadId, agent, input, generation),
        onRunStart: (run) => {
          // A command that passed its open check before shutdown began can admit its turn
          // after shutdown stopped the runs it found: that run stops before any model call
          // (its turn stays admitted; the next host settles it as interrupted).
          if (this.#closed) run.stop("The host is shutting down");
          this.#leases.runStarted();
        },
        onRunEnd: () => {
          this.#actors.trim();
          this.#leases.runEnded();
        },
        settleWhenStoreAnswers: (actor) => this.#actors.settleWhenStoreAnswers(actor),
      },
      assertOpen: () => {
        if (this.#closed) throw new FloretError("host_closed", "Host is shut down");
      },
      gate: this.#gate,
    };
    ctx.runs.equip = goalEquipment(ctx, subagentEquipment(new ChildThreads(ctx)));
    ctx.runs.childEvents = childEventCollector(ctx);
    const service = createThreadService(ctx, agent);
    this.#service = { source: options, service };
    return service;
  }

  shutdown(options?: { signal?: AbortSignal }): Promise<void> {
    if (!this.#shutdown) {
      let signal: AbortSignal | undefined;
      try {
        signal = parseInput(querySchemas.signalOnly, options, "shutdown options")?.signal;
      } catch (error) {
        return Promise.reject(error);
      }
      this.#shutdown = bounded(this.#stop(signal), signal);
    }
    return this.#shutdown;
  }

  /** Uninstalls the host's test ids and clock (see `HostOptions.ids`), once shut down. */
  released: (() => void) | undefined;

  async #stop(signal: AbortSignal | undefined): Promise<void> {
    this.#closed = true;
    const actors = this.#actors.all();
    const runs = actors.flatMap((actor) => (actor.run ? [actor.run] : []));
    for (const run of runs) run.stop("The host is shutting down");
    const settled = Promise.all(runs.map((run) => run.done));
    // Host code may ignore its abort signal; shutdown still returns, bounded
    // by the caller's signal or, without one, by SHUTDOWN_WAIT_MS.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      settled,
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        signal?.addEventListener("abort", () => resolve(), { once: true });
        if (!signal) timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    await this.#titles.stop();
    this.#leases.close();
    this.#actors.stopProbes();
    for (const actor of actors) actor.publisher.close();
    // A waitForIdle still waiting would never settle: a stopped run's turn is not
    // settled here (the next host does that), so no status change comes. Woken, it
    // finds the host closed and rejects `host_closed`.
    for (const actor of this.#actors.all()) actor.wakeStatusWaiters();
    this.released?.();
    await this.#journal.close();
  }
}

/**
 * Shutdown returns when its work is done, when the caller's signal aborts,
 * or after {@link SHUTDOWN_LIMIT_MS} without a signal, whichever comes first:
 * a store whose `close()` hangs must not hang its caller. The work goes on
 * in the background; a failure it meets after that is not reported.
 */
function bounded(work: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", soon);
      resolve();
    };
    // On abort, work that is about to finish (a store that closes at once) still
    // finishes first: the answer waits one macrotask, not for a hung close.
    const soon = (): void => {
      setTimeout(done, 0);
    };
    if (signal?.aborted) soon();
    else signal?.addEventListener("abort", soon, { once: true });
    if (!signal) timer = setTimeout(done, SHUTDOWN_LIMIT_MS);
    work.then(done, (error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", soon);
      reject(error);
    });
  });
}

/** How long `agentFactory` may take to answer before the command that needs it fails. */
export const AGENT_FACTORY_TIMEOUT_MS = 30_000;

/**
 * Races host code (an `agentFactory` answer) against
 * {@link AGENT_FACTORY_TIMEOUT_MS}, as a gateway's request is raced: a factory
 * that never answers must not hang `send`, `cancel` or `view`.
 *
 * @throws {FloretError} `timeout` when it does not answer in time
 */
function withinFactoryLimit<T>(answer: T | Promise<T>): Promise<T> {
  // A plain value (not a thenable) needs no timer.
  if (typeof (answer as { then?: unknown } | null)?.then !== "function") {
    return Promise.resolve(answer);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new FloretError(
            "timeout",
            `agentFactory did not answer within ${AGENT_FACTORY_TIMEOUT_MS} ms`,
          ),
        ),
      AGENT_FACTORY_TIMEOUT_MS,
    );
  });
  return Promise.race([answer, limit]).finally(() => clearTimeout(timer));
}
