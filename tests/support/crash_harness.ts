/**
 * The crash harness for tests/crash_recovery.test.ts: runs the crash child
 * on the same runtime as the test, SIGKILLs it at a chosen point, and
 * reopens what it left behind.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defineAgent, defineTool, isFloretError, openHost } from "@floret/engine";
import type {
  Host,
  ObservationEvent,
  ThreadService,
  ThreadView,
  ToolDefinition,
} from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import type { ScriptedGateway, ScriptStep } from "@floret/engine/testing";
import { denoKvUrl, openStoreUrl } from "./store_url.ts";
import { freshDatabase } from "./postgres.ts";

export const child = fileURLToPath(new URL("./crash_child.ts", import.meta.url));
/** Startup of a cold runtime plus the scenario; the child's own watchdog is 30 s. */
export const CHILD_TIMEOUT_MS = 25_000;

export interface Ack {
  threadId: string;
  runtime: string;
  requestKey: string;
  text: string;
  queued: boolean;
  turnId?: string;
  queueId?: string;
}

export interface Crash {
  acks: Ack[];
  ready: {
    threadId: string;
    callId?: string;
    turnId?: string;
    runtime?: string;
    interactionId?: string;
  };
}

export const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

// The child runs on the same runtime as this test.
export function command(args: string[], script = child): [string, string[]] {
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", script, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [script, ...args]];
  return [process.execPath, ["--import", "tsx", script, ...args]];
}

/**
 * Runs the child until `killWhen` holds for what it printed, SIGKILLs it at
 * once and waits for it to be gone. Fails if the child exits by itself or
 * does not get there in time.
 */
export function crashChild(
  scenario: string,
  paths: { url: string; sideFile: string },
  killWhen: (acks: Ack[], ready: boolean, ticks: number) => boolean = (_acks, ready) => ready,
  script: string = child,
): Promise<Crash> {
  const [cmd, argv] = command([scenario, paths.url, paths.sideFile], script);
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    const acks: Ack[] = [];
    let ready: Crash["ready"] | undefined;
    let ticks = 0;
    let killed = false;
    let buffered = "";
    let stderr = "";
    const kill = (): void => {
      if (killed) return;
      killed = true;
      proc.kill("SIGKILL");
    };
    const timer = setTimeout(kill, CHILD_TIMEOUT_MS);
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk: string) => (stderr += chunk));
    proc.stdout.on("data", (chunk: string) => {
      if (killed) return; // whatever arrives after the kill decision is not acknowledged to us
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("ACK ")) acks.push(JSON.parse(line.slice(4)));
        else if (line.startsWith("READY ")) ready = JSON.parse(line.slice(6));
        else if (line.startsWith("TICK ")) ticks++;
        if (killWhen(acks, ready !== undefined, ticks)) {
          kill();
          return;
        }
      }
    });
    proc.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      const reached = ready !== undefined || killWhen(acks, false, ticks);
      const sameRuntime = [...acks, ...(ready ? [ready] : [])].every((line) =>
        line.runtime === runtime
      );
      if (!sameRuntime) {
        reject(new Error(`Child ${scenario} did not run on ${runtime}`));
        return;
      }
      if (!killed || signal !== "SIGKILL" || !reached) {
        reject(
          new Error(
            `Child ${scenario} ended without reaching its crash point (code ${code}, signal ${signal}):\n${stderr}`,
          ),
        );
        return;
      }
      resolve({ acks, ready: ready ?? { threadId: "" } });
    });
  });
}

/**
 * A temp dir with a database URL (a libSQL file, a Deno KV file, or a fresh
 * PostgreSQL database) and a side file, removed afterwards.
 */
export async function withDir(
  name: string,
  body: (paths: { url: string; sideFile: string }) => Promise<void>,
  backend: "libsql" | "deno-kv" | "postgres" = "libsql",
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `floret-crash-${name}-`));
  const url = backend === "libsql"
    ? `file:${join(dir, "journal.db")}`
    : backend === "postgres"
    ? await freshDatabase(name.replace(/-/g, "_"))
    : denoKvUrl(join(dir, "journal.kv"));
  try {
    await body({ url, sideFile: join(dir, "side-effects.log") });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens a host on the crashed file with a fresh scripted gateway and counting tools. */
export async function reopen(url: string, steps: ScriptStep[], sideFile: string): Promise<{
  host: Host;
  threads: ThreadService;
  gateway: ScriptedGateway;
  runs: Map<string, number>;
  events: ObservationEvent[];
}> {
  const gateway = scriptedGateway(steps);
  const events: ObservationEvent[] = [];
  const runs = new Map<string, number>();
  const counting = (name: string, effect: "read" | "write"): ToolDefinition<{ line: string }> =>
    defineTool({
      name,
      description: `Appends a line to the side file (${effect})`,
      input: z.object({ line: z.string() }),
      effect,
      execute: ({ line }) => {
        runs.set(name, (runs.get(name) ?? 0) + 1);
        appendFileSync(sideFile, `${line}\n`);
        return `ok: ${line}`;
      },
    });
  const agent = defineAgent({
    id: "crash-parent",
    systemPrompt: "Crash test.",
    gateway,
    tools: [
      counting("append_line", "write"),
      counting("lookup", "read"),
      counting("append_once", "write"),
    ],
  });
  const host = await openHost({
    store: await openStoreUrl(url),
    onEvent: (event) => events.push(event),
  });
  return { host, threads: host.threads({ agent }), gateway, runs, events };
}

export function linesOf(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, "utf8").split("\n").filter((line) => line !== "")
    : [];
}

export async function rejectsWith(
  promise: Promise<unknown>,
  code: "no_retry_target",
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isFloretError(error, code), `expected FloretError ${code}, got ${String(error)}`);
    return true;
  });
}

export function toolItems(view: ThreadView): NonNullable<ThreadView["items"][number]["tool"]>[] {
  return view.items.flatMap((item) => (item.tool ? [item.tool] : []));
}

/** Checks that each acknowledged send is in the journal: a user item or a queue entry. */
export function assertAcknowledgedPresent(view: ThreadView, acks: Ack[]): void {
  const userTexts = new Set(
    view.items.filter((item) => item.kind === "user").map((item) => item.text),
  );
  const queued = new Map(view.queue.map((entry) => [entry.requestKey, entry]));
  for (const ack of acks) {
    const entry = queued.get(ack.requestKey);
    assert.ok(
      userTexts.has(ack.text) || entry?.text === ack.text,
      `acknowledged send ${ack.requestKey} is missing after the crash`,
    );
    if (ack.queueId !== undefined && entry) assert.equal(entry.id, ack.queueId);
    if (ack.turnId !== undefined) assert.ok(view.turns.some((turn) => turn.turnId === ack.turnId));
  }
}

/** Replays every acknowledged send and checks it returns the committed result and runs nothing. */
export async function assertReplays(
  threads: ThreadService,
  threadId: string,
  acks: Ack[],
): Promise<void> {
  for (const ack of acks) {
    const replay = await threads.send({
      threadId,
      requestKey: ack.requestKey,
      input: { text: ack.text },
    });
    assert.equal(replay.queued, ack.queued, ack.requestKey);
    assert.equal(replay.turnId, ack.turnId, ack.requestKey);
    assert.equal(replay.view.status, "idle", "a replay starts nothing");
  }
}
