/**
 * The kill-soak: a host process keeps several tool conversations going on one
 * store file (libSQL, or Deno KV on Deno) while this process SIGKILLs it at
 * random moments, restarts it, and checks the store after every restart and at
 * the end. Tools count their side effects in a separate file, one call id per
 * line.
 *
 * Used by bench/soak.ts (`npm run soak -- --minutes N [--store deno-kv]`) and,
 * in a short form, by tests/soak.test.ts and tests/soak_deno_kv.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, openHost } from "@floret/engine";
import { linesOf } from "./crash_harness.ts";
import { conversationGateway, recordTool } from "./conversation_gateway.ts";
import {
  dispatchedCalls,
  journalViolations,
  readThread,
  requestKeyCounts,
  resultStatuses,
} from "./journal_reader.ts";
import { runScaleChild, type ScaleAck } from "./scale_spawn.ts";
import { denoKvUrl, openStoreUrl } from "./store_url.ts";
import { freshDatabase } from "./postgres.ts";

/** The store file the host process and the checks share. */
export type SoakStore = "libsql" | "deno-kv" | "postgres";

/** What a soak found. */
export interface SoakFigures {
  /** Sends the host process acknowledged before it was killed. */
  turnsAcknowledged: number;
  /** Sends in the journal at the end, admitted or queued (in-flight sends may land unacknowledged). */
  turnsFound: number;
  kills: number;
  /** Acknowledged sends missing from the journal (must be 0). */
  lostAcknowledged: number;
  /** Sends in the journal more than once, plus side effects that ran more than once (must be 0). */
  duplicated: number;
  /** Journal invariant breaks, side effects without a dispatch marker, turns left running (must be 0). */
  violations: number;
  /** Tool calls the engine honestly reported as `unknown` (dispatched, result not committed). */
  unknowns: number;
  /** Side effects counted in the side file. */
  sideEffects: number;
  /** The first few problems, for the log. */
  problems: string[];
}

const THREADS = 3;
const HOST_ID = "soak";

const agent = () =>
  defineAgent({
    id: "scale",
    systemPrompt: "Scale test.",
    gateway: conversationGateway(),
    tools: [recordTool(() => {})],
  });

/**
 * Runs the soak for `durationMs` and returns its figures.
 *
 * @param options `log` gets one line per restart; `store` is the backend
 *   (default libSQL; `deno-kv` needs Deno, for this process and the host's)
 */
export async function runSoak(
  durationMs: number,
  options: { log?: (line: string) => void; store?: SoakStore } = {},
): Promise<SoakFigures> {
  const dir = mkdtempSync(join(tmpdir(), "floret-soak-"));
  // The child opens the same URL through openStoreUrl, so both sides agree on the backend.
  const url = options.store === "deno-kv"
    ? denoKvUrl(join(dir, "journal.kv"))
    : options.store === "postgres"
    ? await freshDatabase("soak")
    : `file:${join(dir, "journal.db")}`;
  const sideFile = join(dir, "side-effects.log");
  const acks: ScaleAck[] = [];
  const problems: string[] = [];
  let kills = 0;
  try {
    const setup = await openHost({ store: await openStoreUrl(url), hostId: HOST_ID });
    const threads = setup.threads({ agent: agent() });
    const threadIds: string[] = [];
    for (let i = 0; i < THREADS; i++) {
      threadIds.push((await threads.create({ requestKey: `create-${i}` })).threadId);
    }
    await setup.shutdown();
    const deadline = Date.now() + durationMs;
    for (let epoch = 0; Date.now() < deadline; epoch++) {
      const target = 1 + Math.floor(Math.random() * 8);
      const run = await runScaleChild({
        url,
        sideFile,
        hostId: HOST_ID,
        leaseTtlMs: 30_000,
        threadIds,
        prefix: `e${epoch}`,
        sends: 0,
        tools: 1 + Math.floor(Math.random() * 3),
        delayMs: 40,
      }, {
        // Kill after a random number of acknowledged sends, at a random moment of a turn.
        killWhen: (seen) => seen.length >= target,
        killDelayMs: Math.floor(Math.random() * 250),
        killAfterMs: Math.min(15_000, Math.max(500, deadline - Date.now())),
      });
      if (!run.killed) problems.push(`epoch ${epoch}: the host exited by itself: ${run.stderr}`);
      else kills++;
      acks.push(...run.acks);
      // Restart: the same hostId settles what the killed process left, at once.
      const found = await check(url, threadIds, sideFile, acks);
      problems.push(...found.problems.map((p) => `epoch ${epoch}: ${p}`));
      options.log?.(
        `epoch ${epoch}: ${run.acks.length} acks, ${found.figures.turnsFound} turns, ${found.figures.unknowns} unknown, ${found.problems.length} problems`,
      );
    }
    const final = await check(url, threadIds, sideFile, acks);
    problems.push(...final.problems.map((p) => `final: ${p}`));
    return {
      ...final.figures,
      turnsAcknowledged: acks.length,
      kills,
      violations: final.figures.violations + problems.length - final.problems.length,
      problems: problems.slice(0, 20),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Counted = Omit<SoakFigures, "turnsAcknowledged" | "kills" | "problems">;

/** Opens a host as the restarted process would and checks everything stored. */
async function check(
  url: string,
  threadIds: string[],
  sideFile: string,
  acks: ScaleAck[],
): Promise<{ figures: Counted; problems: string[] }> {
  const problems: string[] = [];
  const figures: Counted = {
    turnsFound: 0,
    lostAcknowledged: 0,
    duplicated: 0,
    violations: 0,
    unknowns: 0,
    sideEffects: 0,
  };
  const store = await openStoreUrl(url);
  const host = await openHost({ store, hostId: HOST_ID });
  try {
    const service = host.threads({ agent: agent() });
    const effects = linesOf(sideFile);
    figures.sideEffects = effects.length;
    const seen = new Set<string>();
    for (const effect of effects) {
      if (seen.has(effect)) {
        figures.duplicated++;
        problems.push(`side effect ${effect} ran twice`);
      }
      seen.add(effect);
    }
    const dispatched = new Set<string>();
    for (const threadId of threadIds) {
      const view = await service.view(threadId);
      if (view.status === "running") {
        figures.violations++;
        problems.push(`${threadId} still running after the restart`);
      }
      const broken = await journalViolations(store, threadId);
      figures.violations += broken.length;
      problems.push(...broken);
      const thread = await readThread(store, threadId);
      for (const id of dispatchedCalls(thread)) dispatched.add(id);
      for (const status of resultStatuses(thread).values()) {
        if (status === "unknown") figures.unknowns++;
      }
      const keys = requestKeyCounts(thread);
      figures.turnsFound += keys.size;
      for (const [key, count] of keys) {
        if (count > 1) {
          figures.duplicated++;
          problems.push(`${key} is in the journal ${count} times`);
        }
      }
      for (const ack of acks.filter((a) => a.threadId === threadId)) {
        if (!keys.has(ack.requestKey)) {
          figures.lostAcknowledged++;
          problems.push(`acknowledged ${ack.requestKey} is missing`);
        }
      }
    }
    for (const effect of seen) {
      if (!dispatched.has(effect)) {
        figures.violations++;
        problems.push(`side effect ${effect} ran without a committed dispatch marker`);
      }
    }
  } finally {
    await host.shutdown();
  }
  return { figures, problems };
}
