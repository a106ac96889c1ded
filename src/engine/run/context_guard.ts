/**
 * The context side of each step of a run: checks the turn's budget once,
 * compacts when the request about to be sent reaches the threshold (or after
 * the provider reported an overflow), and freezes the request with its output
 * budget. It ends the turn itself when the context cannot be made to fit.
 *
 * @module
 */
import type { Agent } from "../../config/agent.ts";
import {
  budgetOf,
  type ContextBudget,
  MAX_CONSECUTIVE_COMPACTION_FAILURES,
  outputBudget,
} from "../../context/budget.ts";
import type { CompactionTrigger, TurnFailure } from "../../journal/entries.ts";
import type { HistoryMessage } from "../../projection/history/history_message.ts";
import { supplementalMessage } from "../../projection/history/supplemental.ts";
import type { ProviderRequest } from "../../provider/gateway.ts";
import type { NewCompaction } from "../compaction/compact.ts";
import { runCompaction } from "../compaction/run_compaction.ts";
import { freezeRequest, type Projection, projectRequest } from "../attempt/request_builder.ts";
import type { RunHost } from "./run_loop.ts";

/** A frozen request and the figures it was built from. */
export interface PreparedRequest {
  request: ProviderRequest;
  projection: Projection;
}

/** The context checks of one run. */
export class ContextGuard {
  readonly #agent: Agent;
  readonly #host: RunHost;
  readonly #ids: { threadId: string; turnId: string; runId: string };
  readonly #budget: ContextBudget | undefined;
  readonly #supplemental: HistoryMessage | undefined;
  #checked = false;

  /**
   * @param agent the turn's agent
   * @param host the thread's side of the run
   * @param ids the run's identity
   */
  constructor(
    agent: Agent,
    host: RunHost,
    ids: { threadId: string; turnId: string; runId: string },
  ) {
    this.#agent = agent;
    this.#host = host;
    this.#ids = ids;
    this.#budget = budgetOf(agent);
    this.#supplemental = supplementalMessage(host.supplementalContext);
  }

  /** The effective window, 0 when unknown. */
  get windowTokens(): number {
    return this.#budget?.window ?? 0;
  }

  /** The request as it would be sent now. */
  project(): Projection {
    return projectRequest(this.#agent, this.#host.history, this.#ephemeral());
  }

  #goalNote: string | undefined;
  #withGoal: HistoryMessage | undefined;

  /** The supplemental context, with the thread's goal (read now: a host may change it mid-turn). */
  #ephemeral(): HistoryMessage | undefined {
    const note = this.#host.goalNote?.();
    if (note === undefined) return this.#supplemental;
    if (note !== this.#goalNote) {
      this.#goalNote = note;
      this.#withGoal = supplementalMessage([
        ...(this.#host.supplementalContext ?? []),
        { title: "Thread goal", text: note },
      ]);
    }
    return this.#withGoal;
  }

  /**
   * The next request, compacted first when needed. The usual step (under the
   * threshold, hashed synchronously) answers at once, the run's first too
   * (its budget check is synchronous); a promise comes back only when there
   * is something to wait for.
   *
   * @param overflow the provider just refused the previous attempt as too large
   * @returns the request, or `undefined` when the turn has ended (or the run lost the thread)
   */
  prepare(
    overflow: boolean,
  ): PreparedRequest | undefined | Promise<PreparedRequest | undefined> {
    const projection = this.project();
    const budget = this.#budget;
    if (!budget) return this.#freeze(projection);
    // The turn's budget is checked once, before its first request.
    if (!this.#checked) {
      this.#checked = true;
      const failure = budgetFailure(budget, projection);
      if (failure) return this.#fail(failure);
    }
    if (!overflow && projection.projected < budget.threshold) return this.#freeze(projection);
    return this.#compactThenFreeze(budget, projection, overflow);
  }

  /** Ends the turn on a budget that can never fit. */
  async #fail(failure: TurnFailure): Promise<undefined> {
    await this.#host.endTurn("failed", failure);
    return undefined;
  }

  /** {@link prepare} at or over the threshold, or after an overflow: compacts, then freezes. */
  async #compactThenFreeze(
    budget: ContextBudget,
    first: Projection,
    overflow: boolean,
  ): Promise<PreparedRequest | undefined> {
    let projection = first;
    let installed = false;
    if (this.#host.history.compactionFailures() < MAX_CONSECUTIVE_COMPACTION_FAILURES) {
      const entry = await this.#compact(budget, projection, overflow ? "overflow" : "threshold");
      if (!entry) return undefined;
      installed = entry.status === "compacted";
      if (installed) projection = this.project();
    }
    if (!installed && (overflow || projection.projected >= budget.hardLimit)) {
      await this.#host.endTurn("failed", {
        code: "context_compaction_limit",
        message: overflow
          ? "The provider refused the request as too large and compaction could not make it fit"
          : `The request needs ${projection.projected} tokens, over the limit of ` +
            `${budget.hardLimit}, and compaction could not make it fit`,
      });
      return undefined;
    }
    return await this.#freeze(projection);
  }

  /** Runs and commits one compaction; `undefined` when the run lost the thread. */
  #compact(
    budget: ContextBudget,
    projection: Projection,
    trigger: CompactionTrigger,
  ): Promise<NewCompaction | undefined> {
    const { turnId, runId } = this.#ids;
    return runCompaction(this.#agent, this.#host, budget, projection, { turnId, runId, trigger });
  }

  #freeze(projection: Projection): PreparedRequest | Promise<PreparedRequest> {
    const maxOutputTokens = outputBudget(this.#budget, this.#agent, projection.projected);
    const request = freezeRequest(
      this.#agent,
      projection.listing,
      this.#ids.threadId,
      maxOutputTokens,
      this.#host.secrets(),
      this.#host.labels,
    );
    return request instanceof Promise
      ? request.then((frozen) => ({ request: frozen, projection }))
      : { request, projection };
  }
}

/** Why a turn's budget can never fit, checked before any request; numbers only, never prompt text. */
function budgetFailure(budget: ContextBudget, projection: Projection): TurnFailure | undefined {
  if (budget.maxOutputTokens !== undefined && budget.maxOutputTokens >= budget.window) {
    return {
      code: "context_budget_invalid",
      message: `The output budget of ${budget.maxOutputTokens} tokens leaves no room in a ` +
        `${budget.window}-token window`,
    };
  }
  if (projection.fixed >= budget.hardLimit) {
    return {
      code: "context_fixed_overhead",
      message: `The system prompt, tools and current input need ${projection.fixed} tokens, ` +
        `at or over the request limit of ${budget.hardLimit}`,
    };
  }
  return undefined;
}
