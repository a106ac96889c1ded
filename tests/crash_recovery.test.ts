// Restart recovery with real crashes: a child process (same runtime as this
// test) drives a thread on a libSQL file to a chosen point and is SIGKILLed
// there; this process then reopens the file with `openHost` and checks what
// the public API shows (DESIGN.md §5 "Effect boundary", §8 "Restart recovery").
import { test } from "node:test";
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
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";
import type { ScriptedGateway, ScriptStep } from "@floret/engine/testing";

const child = fileURLToPath(new URL("./support/crash_child.ts", import.meta.url));
/** Startup of a cold runtime plus the scenario; the child's own watchdog is 30 s. */
const CHILD_TIMEOUT_MS = 25_000;

interface Ack {
  threadId: string;
  runtime: string;
  requestKey: string;
  text: string;
  queued: boolean;
  turnId?: string;
  queueId?: string;
}

interface Crash {
  acks: Ack[];
  ready: { threadId: string; callId?: string; turnId?: string; runtime?: string };
}

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

// The child runs on the same runtime as this test.
function command(args: string[]): [string, string[]] {
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", child, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [child, ...args]];
  return [process.execPath, ["--import", "tsx", child, ...args]];
}

/**
 * Runs the child until `killWhen` holds for what it printed, SIGKILLs it at
 * once and waits for it to be gone. Fails if the child exits by itself or
 * does not get there in time.
 */
function crashChild(
  scenario: string,
  paths: { url: string; sideFile: string },
  killWhen: (acks: Ack[], ready: boolean, ticks: number) => boolean = (_acks, ready) => ready,
): Promise<Crash> {
  const [cmd, argv] = command([scenario, paths.url, paths.sideFile]);
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

/** A temp dir with a database URL and a side file, removed afterwards. */
async function withDir(
  name: string,
  body: (paths: { url: string; sideFile: string }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `floret-crash-${name}-`));
  try {
    await body({ url: `file:${join(dir, "journal.db")}`, sideFile: join(dir, "side-effects.log") });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens a host on the crashed file with a fresh scripted gateway and counting tools. */
async function reopen(url: string, steps: ScriptStep[], sideFile: string): Promise<{
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
    store: libsqlStore({ url }),
    onEvent: (event) => events.push(event),
  });
  return { host, threads: host.threads({ agent }), gateway, runs, events };
}

function linesOf(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, "utf8").split("\n").filter((line) => line !== "")
    : [];
}

async function rejectsWith(promise: Promise<unknown>, code: "no_retry_target"): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isFloretError(error, code), `expected FloretError ${code}, got ${String(error)}`);
    return true;
  });
}

function toolItems(view: ThreadView): NonNullable<ThreadView["items"][number]["tool"]>[] {
  return view.items.flatMap((item) => (item.tool ? [item.tool] : []));
}

test("a crash while the provider streams leaves the turn interrupted, and retry completes it", {
  timeout: 60_000,
}, async () => {
  await withDir("stream", async (paths) => {
    const { ready, acks } = await crashChild("stream", paths);
    assert.equal(acks.length, 1);
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "The whole answer." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assert.equal(view.status, "idle");
      assert.equal(view.turns.length, 1);
      const [turn] = view.turns;
      assert.equal(turn.turnId, acks[0].turnId);
      assert.equal(turn.outcome, "interrupted");
      assert.equal(turn.failure?.code, "interrupted");
      assert.deepEqual(view.items.filter((item) => item.kind === "user").map((item) => item.text), [
        "go",
      ]);
      assert.ok(view.items.every((item) => !item.live), "no live text survives a restart");
      assert.equal(gateway.requests.length, 0, "nothing resumes by itself");

      const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
      assert.notEqual(retried.turnId, turn.turnId);
      const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      const last = done.turns.at(-1);
      assert.equal(last?.turnId, retried.turnId);
      assert.equal(last?.outcome, "completed");
      assert.deepEqual(last?.retryOf, { turnId: turn.turnId, mode: "resume" });
      assert.equal(done.items.at(-1)?.kind, "assistant");
      assert.equal(done.items.at(-1)?.text, "The whole answer.");
      assert.equal(
        done.items.filter((item) => item.kind === "user").length,
        1,
        "retry adds no user item",
      );
      assert.equal(gateway.requests.length, 1);
      const userTexts = gateway.requests[0].messages.flatMap((
        m,
      ) => (m.role === "user" ? [m.text] : []));
      assert.deepEqual(userTexts, ["go"]);
    } finally {
      await host.shutdown();
    }
  });
});

test("a crash after a write tool was dispatched leaves it unknown and never re-runs it", {
  timeout: 60_000,
}, async () => {
  await withDir("write", async (paths) => {
    const { ready } = await crashChild("write", paths);
    assert.ok(ready.callId);
    assert.deepEqual(linesOf(paths.sideFile), ["written"], "the handler ran once before the crash");

    const first = await reopen(paths.url, [{ text: "Should never be asked." }], paths.sideFile);
    try {
      const view = await first.threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assert.equal(view.status, "idle");
      const tools = toolItems(view);
      assert.equal(tools.length, 1);
      assert.equal(tools[0].callId, ready.callId);
      assert.equal(tools[0].name, "append_line");
      assert.equal(tools[0].status, "unknown");
      assert.equal(view.turns.length, 1);
      assert.equal(view.turns[0].outcome, "failed");
      assert.equal(view.turns[0].failure?.code, "effect_outcome_unknown");
      await rejectsWith(
        first.threads.retry({ threadId: ready.threadId, requestKey: "retry-1" }),
        "no_retry_target",
      );
      assert.equal(first.runs.get("append_line"), undefined);
      assert.equal(first.gateway.requests.length, 0);
    } finally {
      await first.host.shutdown();
    }

    // A second restart settles nothing again and still runs nothing.
    const second = await reopen(paths.url, [{ text: "Should never be asked." }], paths.sideFile);
    try {
      const view = await second.threads.view(ready.threadId);
      assert.equal(view.status, "idle");
      assert.deepEqual(toolItems(view).map((tool) => tool.status), ["unknown"]);
      assert.deepEqual(view.turns.map((turn) => turn.failure?.code), ["effect_outcome_unknown"]);
      await rejectsWith(
        second.threads.retry({ threadId: ready.threadId, requestKey: "retry-2" }),
        "no_retry_target",
      );
      assert.equal(second.runs.get("append_line"), undefined);
      assert.equal(second.gateway.requests.length, 0);
      assert.deepEqual(linesOf(paths.sideFile), ["written"], "the handler ran exactly once in all");
    } finally {
      await second.host.shutdown();
    }
  });
});

test("a crash while a read tool runs cancels the call, and retry runs it again", {
  timeout: 60_000,
}, async () => {
  await withDir("read", async (paths) => {
    const { ready, acks } = await crashChild("read", paths);
    assert.ok(ready.callId);
    assert.deepEqual(linesOf(paths.sideFile), ["looked up"]);

    const steps: ScriptStep[] = [
      { toolCalls: [{ name: "lookup", arguments: { line: "looked up again" } }] },
      { text: "Found it." },
    ];
    const { host, threads, gateway, runs } = await reopen(paths.url, steps, paths.sideFile);
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      const tools = toolItems(view);
      assert.equal(tools.length, 1);
      assert.equal(tools[0].callId, ready.callId);
      assert.equal(tools[0].status, "cancelled");
      assert.equal(view.turns.length, 1);
      assert.equal(view.turns[0].turnId, acks[0].turnId);
      assert.equal(view.turns[0].outcome, "interrupted");
      assert.equal(view.turns[0].failure?.code, "interrupted");
      assert.equal(gateway.requests.length, 0);

      const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
      const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
      const last = done.turns.at(-1);
      assert.equal(last?.turnId, retried.turnId);
      assert.equal(last?.outcome, "completed");
      assert.deepEqual(last?.retryOf, { turnId: acks[0].turnId, mode: "resume" });
      assert.equal(runs.get("lookup"), 1, "the safe call ran again");
      assert.deepEqual(linesOf(paths.sideFile), ["looked up", "looked up again"]);
      assert.deepEqual(toolItems(done).map((tool) => tool.status), ["cancelled", "completed"]);
      assert.equal(done.items.at(-1)?.text, "Found it.");
      // Resumed from the save point: the model sees its earlier call and that it was cut off.
      const resumed = gateway.requests[0].messages;
      assert.ok(
        resumed.some((m) =>
          m.role === "assistant" && m.toolCalls?.some((c) => c.callId === ready.callId)
        ),
      );
      assert.ok(
        resumed.some((m) => m.role === "tool" && m.callId === ready.callId && m.isError === true),
      );
    } finally {
      await host.shutdown();
    }
  });
});

test(
  "a crash after a write tool's result was committed keeps the result, and retry does not re-run it",
  {
    timeout: 60_000,
  },
  async () => {
    await withDir("written", async (paths) => {
      const { ready, acks } = await crashChild("written", paths);
      assert.deepEqual(linesOf(paths.sideFile), ["written"]);
      const { host, threads, gateway, runs } = await reopen(
        paths.url,
        [{ text: "Done." }],
        paths.sideFile,
      );
      try {
        const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
        const tools = toolItems(view);
        assert.deepEqual(tools.map((tool) => [tool.name, tool.status, tool.output]), [
          ["append_once", "completed", "ok: written"],
        ]);
        assert.deepEqual(view.turns.map((turn) => [turn.outcome, turn.failure?.code]), [[
          "interrupted",
          "interrupted",
        ]]);

        const retried = await threads.retry({ threadId: ready.threadId, requestKey: "retry-1" });
        const done = await threads.waitForIdle(ready.threadId, { timeoutMs: 10_000 });
        assert.deepEqual(done.turns.at(-1)?.retryOf, { turnId: acks[0].turnId, mode: "resume" });
        assert.equal(done.turns.at(-1)?.turnId, retried.turnId);
        assert.equal(done.turns.at(-1)?.outcome, "completed");
        assert.equal(done.items.at(-1)?.text, "Done.");
        assert.equal(runs.get("append_once"), undefined, "the completed call is kept, not re-run");
        assert.deepEqual(linesOf(paths.sideFile), ["written"]);
        assert.equal(gateway.requests.length, 1);
        const toolMessages = gateway.requests[0].messages.filter((m) => m.role === "tool");
        assert.deepEqual(
          toolMessages.map((m) => m.role === "tool" && [m.output, m.isError ?? false]),
          [
            ["ok: written", false],
          ],
        );
      } finally {
        await host.shutdown();
      }
    });
  },
);

test("crashes at arbitrary points of a tool loop never lose or repeat a side effect", {
  timeout: 120_000,
}, async () => {
  // Kill points in ticks (tool runs seen); the kill lands wherever the child is by then.
  for (const killAt of [1, 2, 3, 5, 8, 13]) {
    await withDir(`loop-${killAt}`, async (paths) => {
      const { acks } = await crashChild("loop", paths, (_acks, _ready, ticks) => ticks >= killAt);
      const threadId = acks[0].threadId;
      const ran = linesOf(paths.sideFile);
      assert.ok(ran.length >= killAt);
      assert.equal(new Set(ran).size, ran.length, "no handler ran twice");

      const { host, threads, gateway, runs } = await reopen(
        paths.url,
        [{ text: "Done." }],
        paths.sideFile,
      );
      try {
        const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
        assert.equal(view.status, "idle");
        assert.equal(view.turns.length, 1);
        const tools = toolItems(view);
        for (const tool of tools) {
          // A write call is dispatched before its handler runs: it ran (completed) or may have (unknown).
          if (tool.status === "completed") {
            assert.ok(ran.includes(tool.callId), `${tool.callId} completed but never ran`);
          } else {assert.equal(
              tool.status,
              "unknown",
              `${killAt}: ${tool.callId} is ${tool.status}`,
            );}
        }
        for (const callId of ran) {
          assert.ok(
            tools.some((tool) => tool.callId === callId),
            `${callId} ran but has no tool item`,
          );
        }
        const unknown = tools.filter((tool) => tool.status === "unknown");
        assert.ok(unknown.length <= 1);
        const [turn] = view.turns;
        if (unknown.length === 1) {
          assert.deepEqual([turn.outcome, turn.failure?.code], [
            "failed",
            "effect_outcome_unknown",
          ]);
          await rejectsWith(threads.retry({ threadId, requestKey: "retry" }), "no_retry_target");
        } else {
          assert.deepEqual([turn.outcome, turn.failure?.code], ["interrupted", "interrupted"]);
          await threads.retry({ threadId, requestKey: "retry" });
          const done = await threads.waitForIdle(threadId, { timeoutMs: 10_000 });
          assert.equal(done.turns.at(-1)?.outcome, "completed");
          assert.equal(gateway.requests.length, 1);
        }
        assert.equal(runs.get("record_call"), undefined, "nothing ran again after the restart");
        assert.deepEqual(linesOf(paths.sideFile), ran);
      } finally {
        await host.shutdown();
      }
    });
  }
});

/** Checks that each acknowledged send is in the journal: a user item or a queue entry. */
function assertAcknowledgedPresent(view: ThreadView, acks: Ack[]): void {
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
async function assertReplays(threads: ThreadService, threadId: string, acks: Ack[]): Promise<void> {
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

test("no acknowledged send is lost: completed, handed-over and queued input survive a crash", {
  timeout: 60_000,
}, async () => {
  await withDir("queue", async (paths) => {
    const { ready, acks } = await crashChild("queue", paths);
    assert.deepEqual(acks.map((ack) => [ack.requestKey, ack.queued]), [
      ["send-1", false],
      ["send-2", true],
      ["send-3", true],
      ["send-4", true],
    ]);
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "Should never be asked." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(ready.threadId, { timeoutMs: 5_000 });
      assertAcknowledgedPresent(view, acks);
      assert.deepEqual(view.turns.map((turn) => turn.outcome), ["completed", "interrupted"]);
      assert.equal(view.turns[0].turnId, acks[0].turnId);
      assert.deepEqual(view.items.map((item) => [item.kind, item.text]), [
        ["user", "first"],
        ["assistant", "First answer."],
        ["user", "second"],
      ]);
      assert.deepEqual(view.queue.map((entry) => entry.requestKey), ["send-3", "send-4"]);

      await assertReplays(threads, ready.threadId, acks);
      const after = await threads.view(ready.threadId);
      assert.equal(after.turns.length, 2, "replays admit no turn");
      assert.deepEqual(after.queue, view.queue, "replays queue nothing");
      assert.equal(gateway.requests.length, 0, "the gateway saw no request");
    } finally {
      await host.shutdown();
    }
  });
});

test("no acknowledged send is lost when the crash lands in a stream of sends", {
  timeout: 60_000,
}, async () => {
  const killAfter = 25;
  await withDir("flood", async (paths) => {
    const { acks } = await crashChild("flood", paths, (seen) => seen.length >= killAfter);
    assert.equal(acks.length, killAfter);
    const threadId = acks[0].threadId;
    const { host, threads, gateway } = await reopen(
      paths.url,
      [{ text: "Should never be asked." }],
      paths.sideFile,
    );
    try {
      const view = await threads.waitForIdle(threadId, { timeoutMs: 5_000 });
      assertAcknowledgedPresent(view, acks);
      assert.deepEqual(view.turns.map((turn) => turn.outcome), ["interrupted"]);
      // Sends ran one after another: what survived is a gap-free prefix (maybe longer than we saw).
      const keys = view.queue.map((entry) => entry.requestKey);
      assert.ok(keys.length >= killAfter - 1);
      assert.deepEqual(keys, keys.map((_key, i) => `flood-${i + 1}`));
      await assertReplays(threads, threadId, acks);
      assert.equal(gateway.requests.length, 0, "the gateway saw no request");
    } finally {
      await host.shutdown();
    }
  });
});
