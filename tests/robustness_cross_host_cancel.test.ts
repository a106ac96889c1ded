/**
 * Issue 28: a cancel issued on another host reaches the host running the
 * turn within a second or two (it took a lease tick, about 10 s, during which
 * the run kept streaming). Two hosts with distinct ids share one libSQL file.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, type Gateway, openHost, type ProviderEvent } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { TIMEOUT, watchdog } from "./support/robust.ts";

/** A gateway that streams a little text, then waits until its attempt is aborted. */
function streamingUntilAborted() {
  let started!: () => void;
  let aborted!: () => void;
  const state = {
    started: new Promise<void>((resolve) => (started = resolve)),
    aborted: new Promise<void>((resolve) => (aborted = resolve)),
  };
  const gateway: Gateway = {
    info: { provider: "test", model: "slow", stateKey: "test:slow", capabilities: {} },
    async *stream(_request, { signal }): AsyncIterable<ProviderEvent> {
      yield { type: "text", delta: "thinking out loud" };
      started();
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      aborted();
      signal.throwIfAborted();
    },
  };
  return { gateway, state };
}

for (const mode of ["immediate", "graceful"] as const) {
  describe(`robustness: a ${mode} cancel on another host`, () => {
    test("stops the run streaming on the first host within a second or two", TIMEOUT, async () => {
      const dir = mkdtempSync(join(tmpdir(), "floret-cancel-"));
      const url = `file:${join(dir, "shared.db")}`;
      try {
        await watchdog(20_000, async () => {
          const { gateway, state } = streamingUntilAborted();
          // The default lease (30 s): its renewal tick alone came every 10 s.
          const running = await openHost({ store: libsqlStore({ url }), hostId: "running" });
          const other = await openHost({ store: libsqlStore({ url }), hostId: "other" });
          try {
            const a = running.threads({
              agent: defineAgent({ id: "a", systemPrompt: "s", gateway }),
            });
            const b = other.threads({
              agent: defineAgent({ id: "a", systemPrompt: "s", gateway: scriptedGateway([]) }),
            });
            const { threadId } = await a.create({ requestKey: "c" });
            await a.send({ threadId, requestKey: "s", input: { text: "go" } });
            await state.started;
            await b.cancel({ threadId, requestKey: "stop", mode });
            // Well under the old 10 s tick, with room for a loaded machine.
            await watchdog(4_000, () => state.aborted, "the running host's stop");
            const view = await a.waitForIdle(threadId, { timeoutMs: 4_000 });
            assert.equal(view.status, "idle");
            assert.equal(view.turns.at(-1)?.outcome, "cancelled");
            // The other host sees the same.
            assert.equal((await b.view(threadId)).turns.at(-1)?.outcome, "cancelled");
          } finally {
            await running.shutdown();
            await other.shutdown();
          }
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
