// Sub-agents and real crashes: a child process drives a lead thread and its
// worker child on a libSQL file and is SIGKILLed at each step of
// spawn → child runs → wait → parent continues; this process reopens the file
// and checks that no second child ever starts and that retry finishes the work.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  openHost,
  type ProviderRequest,
  type ThreadService,
  type ThreadView,
} from "@floret/engine";
import { withDir } from "./support/crash_harness.ts";
import { openStoreUrl } from "./support/store_url.ts";
import { leadAgent, SPAWN, WAIT } from "./support/subagent_family.ts";
import { toolOutputs } from "./support/subagents.ts";
import type { ScriptStep } from "@floret/engine/testing";

const childPath = fileURLToPath(new URL("./support/subagent_crash_child.ts", import.meta.url));

/** Runs the crash child until it prints READY, then SIGKILLs it; resolves with the lead's thread id. */
function crashAt(scenario: string, url: string): Promise<string> {
  const args = [childPath, scenario, url];
  const [cmd, argv] = "Deno" in globalThis
    ? [process.execPath, ["run", "-A", ...args]]
    : "Bun" in globalThis
    ? [process.execPath, args]
    : [process.execPath, ["--import", "tsx", ...args]];
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let threadId: string | undefined;
    const timer = setTimeout(() => proc.kill("SIGKILL"), 25_000);
    proc.stderr.on("data", (chunk) => (err += chunk));
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("READY "));
      if (line && !threadId) {
        threadId = JSON.parse(line.slice(6)).threadId;
        proc.kill("SIGKILL");
      }
    });
    proc.on("close", (_code, signal) => {
      clearTimeout(timer);
      if (threadId && signal === "SIGKILL") resolve(threadId);
      else reject(new Error(`${scenario} child ended without READY (${signal}):\n${err}`));
    });
  });
}

async function reopen(
  url: string,
  lead: ScriptStep[] | ((typeof WAIT) | ScriptStep)[],
  worker: ScriptStep[],
) {
  const host = await openHost({ store: await openStoreUrl(url) });
  const threads = host.threads({ agent: leadAgent(lead, worker) });
  return { host, threads };
}

async function childrenOf(threads: ThreadService, threadId: string): Promise<string[]> {
  return (await threads.list({ parentThreadId: threadId })).threads.map((t) => t.threadId);
}

function tools(view: ThreadView, name: string) {
  return view.items.flatMap((item) => (item.tool?.name === name ? [item.tool] : []));
}

const options = { timeout: 60_000 };

test(
  "killed after the child started, before the spawn's result: retry's spawn adopts the same child",
  options,
  async () => {
    await withDir("spawn", async ({ url }) => {
      const leadId = await crashAt("spawn", url);
      const seen: ProviderRequest[] = [];
      const { host, threads } = await reopen(
        url,
        [
          // Retry ran the interrupted spawn (and the held read) again before asking the model:
          // its first request already carries the spawn's result.
          (request) => {
            seen.push(request);
            return { text: `child ${toolOutputs(request, "spawn_agent").at(-1)?.threadId}` };
          },
        ],
        [{ text: "late result" }],
      );
      try {
        const lead = await threads.waitForIdle(leadId, { timeoutMs: 5_000 });
        assert.equal(lead.turns.at(-1)?.outcome, "interrupted");
        assert.equal(tools(lead, "spawn_agent")[0].status, "cancelled");
        const [childId, ...others] = await childrenOf(threads, leadId);
        assert.ok(childId);
        assert.deepEqual(others, []);
        const child = await threads.waitForIdle(childId, { timeoutMs: 5_000 });
        assert.equal(child.turns.length, 1);
        assert.equal(child.turns[0].outcome, "interrupted", "the child settles like any thread");

        await threads.retry({ threadId: leadId, requestKey: "retry-1" });
        const done = await threads.waitForIdle(leadId, { timeoutMs: 10_000 });
        assert.equal(done.turns.at(-1)?.outcome, "completed", "the parent continues");
        assert.equal(done.items.at(-1)?.text, `child ${childId}`);
        assert.deepEqual(await childrenOf(threads, leadId), [childId], "no second child");
        assert.equal((await threads.view(childId)).turns.length, 1, "its task was not sent twice");
        // The same calls, now with their results (no second item, nothing told as cancelled).
        assert.deepEqual(
          [...tools(done, "spawn_agent"), ...tools(done, "hold")].map((t) => [t.callId, t.status]),
          [["call-spawn", "completed"], ["call-hold", "completed"]],
        );
        assert.deepEqual(JSON.parse(tools(done, "spawn_agent")[0].output ?? ""), {
          threadId: childId,
        });
        // The model's one request carries both real results, in call order.
        assert.equal(seen.length, 1);
        const results = seen[0].messages.flatMap((m) => m.role === "tool" ? [m] : []);
        assert.deepEqual(results.map((m) => [m.callId, m.output, m.isError]), [
          ["call-spawn", JSON.stringify({ threadId: childId }), undefined],
          ["call-hold", "released", undefined],
        ]);
      } finally {
        await host.shutdown();
      }
    });
  },
);

test(
  "killed after the spawn's result, while the child runs: a replayed spawn finds the same child, the wait reads interrupted",
  options,
  async () => {
    await withDir("spawned", async ({ url }) => {
      const leadId = await crashAt("spawned", url);
      const { host, threads } = await reopen(
        url,
        [
          // The retried model repeats the same call (same id): a replay, not a new child.
          { toolCalls: [SPAWN] },
          WAIT,
          (request) => ({
            text: `got ${JSON.stringify(toolOutputs(request, "wait_agents").at(-1))}`,
          }),
        ],
        [{ text: "never asked" }],
      );
      try {
        const lead = await threads.waitForIdle(leadId, { timeoutMs: 5_000 });
        assert.equal(lead.turns.at(-1)?.outcome, "interrupted");
        assert.equal(tools(lead, "spawn_agent")[0].status, "completed");
        const [childId, ...others] = await childrenOf(threads, leadId);
        assert.deepEqual(others, []);
        const child = await threads.waitForIdle(childId, { timeoutMs: 5_000 });
        assert.equal(child.turns.length, 1);
        assert.equal(child.turns[0].outcome, "interrupted", "the child settles like any thread");

        await threads.retry({ threadId: leadId, requestKey: "retry-lead" });
        const done = await threads.waitForIdle(leadId, { timeoutMs: 10_000 });
        assert.equal(
          done.items.at(-1)?.text,
          `got {"agents":[{"threadId":"${childId}","status":"interrupted"}]}`,
        );
        assert.deepEqual(await childrenOf(threads, leadId), [childId], "no second child");
        assert.equal((await threads.view(childId)).turns.length, 1, "its task was not sent twice");
      } finally {
        await host.shutdown();
      }
    });
  },
);

test(
  "killed while the lead waits: the wait is cancelled; retry runs the wait again and continues",
  options,
  async () => {
    await withDir("wait", async ({ url }) => {
      const leadId = await crashAt("wait", url);
      const { host, threads } = await reopen(
        url,
        [
          // Retry waits again before asking the model: the wait's result is already there.
          (request) => ({
            text: `got ${JSON.stringify(toolOutputs(request, "wait_agents").at(-1))}`,
          }),
        ],
        [{ text: "found it" }],
      );
      try {
        const lead = await threads.waitForIdle(leadId, { timeoutMs: 5_000 });
        assert.equal(lead.turns.at(-1)?.outcome, "interrupted");
        assert.equal(tools(lead, "wait_agents")[0].status, "cancelled");
        const [childId, ...others] = await childrenOf(threads, leadId);
        assert.deepEqual(others, []);
        assert.equal((await threads.view(childId)).turns[0].outcome, "interrupted");

        await threads.retry({ threadId: childId, requestKey: "retry-child" });
        await threads.waitForIdle(childId, { timeoutMs: 10_000 });
        await threads.retry({ threadId: leadId, requestKey: "retry-lead" });
        const done = await threads.waitForIdle(leadId, { timeoutMs: 10_000 });
        assert.equal(
          done.items.at(-1)?.text,
          `got {"agents":[{"threadId":"${childId}","status":"completed","report":"found it"}]}`,
        );
        assert.deepEqual(await childrenOf(threads, leadId), [childId]);
        assert.deepEqual(tools(done, "wait_agents").map((t) => [t.callId, t.status]), [
          ["call-wait", "completed"],
        ]);
      } finally {
        await host.shutdown();
      }
    });
  },
);

test("killed after the wait returned: retry continues from the kept report", options, async () => {
  await withDir("continue", async ({ url }) => {
    const leadId = await crashAt("continue", url);
    const { host, threads } = await reopen(
      url,
      [(request) => ({
        text: `final: ${JSON.stringify(toolOutputs(request, "wait_agents").at(-1))}`,
      })],
      [],
    );
    try {
      const lead = await threads.waitForIdle(leadId, { timeoutMs: 5_000 });
      assert.equal(lead.turns.at(-1)?.outcome, "interrupted");
      const [wait] = tools(lead, "wait_agents");
      assert.equal(wait.status, "completed");
      const [childId, ...others] = await childrenOf(threads, leadId);
      assert.deepEqual(others, []);
      assert.equal((await threads.view(childId)).turns[0].outcome, "completed");

      await threads.retry({ threadId: leadId, requestKey: "retry-lead" });
      const done = await threads.waitForIdle(leadId, { timeoutMs: 10_000 });
      assert.equal(
        done.items.at(-1)?.text,
        `final: {"agents":[{"threadId":"${childId}","status":"completed","report":"found it"}]}`,
      );
      assert.deepEqual(await childrenOf(threads, leadId), [childId]);
    } finally {
      await host.shutdown();
    }
  });
});
