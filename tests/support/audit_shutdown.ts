/**
 * Helpers of the round-11 shutdown audits (tests/audit_lifecycle_shutdown*.test.ts):
 * stores that outlive a host, tools and a gateway that ignore their abort
 * signal, shutdown with each kind of signal, and the checks of a closed host.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  type Agent,
  defineAgent,
  defineTool,
  type Gateway,
  type Host,
  type KvStore,
  memoryStore,
  type ProviderEvent,
  type ThreadService,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";
import { rejectsWith } from "./robust.ts";

/** How long one audit test may take before its watchdog fails it. */
export const WATCHDOG_MS = 20_000;

let dir: string | undefined;
let dbs = 0;

/** Removes the libSQL files {@link backing} made (call it in the test file's `after`). */
export function removeBackings(): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
}

/** Opens stores on one backing: a libSQL file, or one memory store whose close does nothing. */
export function backing(kind: "libsql" | "memory"): () => KvStore {
  if (kind === "libsql") {
    dir ??= mkdtempSync(join(tmpdir(), "floret-audit-shutdown-"));
    const url = `file:${join(dir, `shutdown-${++dbs}.db`)}`;
    return () => libsqlStore({ url });
  }
  const inner = memoryStore();
  return () => ({ ...inner, close: () => Promise.resolve() });
}

/** A tool held open by the test that never reads its signal. */
export function heldTool(
  name: string,
  effect: "read" | "write",
  permission: "allow" | "ask" = "allow",
) {
  const runs: string[] = [];
  let release: (output: string) => void = () => {};
  let startedResolve!: () => void;
  const started = new Promise<void>((resolve) => (startedResolve = resolve));
  const tool = defineTool({
    name,
    description: "Held by the test",
    input: z.object({}),
    effect,
    permission,
    execute: (_input, context) => {
      runs.push(context.callId);
      startedResolve();
      return new Promise<string>((resolve) => (release = resolve));
    },
  });
  return { tool, runs, started, release: (output: string) => release(output) };
}

/** Streams `partial`, then never answers and ignores its abort signal. */
export function deafAfterText(partial: string): Gateway & { attempts: () => number } {
  let attempts = 0;
  return {
    info: { provider: "deaf", model: "m", stateKey: "deaf:m", capabilities: {} },
    attempts: () => attempts,
    stream(): AsyncIterable<ProviderEvent> {
      attempts++;
      let sent = false;
      return {
        [Symbol.asyncIterator]: () => ({
          next(): Promise<IteratorResult<ProviderEvent>> {
            if (sent) return new Promise(() => {});
            sent = true;
            return Promise.resolve({ done: false, value: { type: "text", delta: partial } });
          },
        }),
      };
    },
  };
}

/** The audit agent: one scripted gateway, these tools. */
export const agentOf = (gateway: Gateway, tools: ToolDefinition[] = []): Agent =>
  defineAgent({ id: "audit-shutdown", systemPrompt: "Audit.", gateway, tools });

/** Reads the view until `done` holds (bounded). */
export async function until(
  threads: ThreadService,
  threadId: string,
  done: (view: ThreadView) => boolean,
): Promise<ThreadView> {
  for (let i = 0; i < 2_000; i++) {
    const view = await threads.view(threadId);
    if (done(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("the condition never held");
}

/** How shutdown is bounded: no signal, a signal aborted shortly after, or one aborted already. */
export type SignalMode = "no signal" | "a signal" | "an aborted signal";

/** Shuts down in `mode`. */
export async function shutdownWith(host: Host, mode: SignalMode): Promise<void> {
  if (mode === "no signal") return await host.shutdown();
  const controller = new AbortController();
  if (mode === "an aborted signal") controller.abort();
  const timer = setTimeout(() => controller.abort(), 100);
  try {
    await host.shutdown({ signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

/** Every public call of a shut-down host is host_closed. */
export async function assertClosed(
  host: Host,
  threads: ThreadService,
  threadId: string,
): Promise<void> {
  await rejectsWith(threads.view(threadId), "host_closed");
  await rejectsWith(
    threads.send({ threadId, requestKey: "after", input: { text: "after" } }),
    "host_closed",
  );
  await rejectsWith(threads.cancel({ threadId, requestKey: "after-cancel" }), "host_closed");
  await rejectsWith(threads.create({ requestKey: "after-create" }), "host_closed");
  await rejectsWith(() => host.threads({ agent: agentOf(scriptedGateway([])) }), "host_closed");
  await rejectsWith(threads.waitForIdle(threadId), "host_closed");
  await rejectsWith(threads.history(threadId), "host_closed");
  await rejectsWith(threads.list(), "host_closed");
  await rejectsWith(host.activate(), "host_closed");
  await rejectsWith(async () => {
    for await (const _ of threads.subscribe(threadId)) break;
  }, "host_closed");
  // A second shutdown is the same finished shutdown.
  await host.shutdown();
}

/** The view's tool items. */
export const tools = (view: ThreadView) => view.items.filter((item) => item.kind === "tool");
