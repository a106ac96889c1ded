// The example server's tenant model and Host allow-list, over a real loopback
// socket: alice and bob each see only their own threads, and a request whose
// Host names another site (DNS rebinding) is refused before the API runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadClient } from "@floret/engine/http";
import { startServer, stopServer } from "./support/example_server.ts";

/** A GET with a Host header of our choosing (fetch does not let one set it). */
function getWithHost(origin: string, path: string, host: string): Promise<number> {
  const url = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname: url.hostname, port: url.port, path: url.pathname, headers: { host } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

test(
  "the example server keeps its two users apart and checks Host",
  { timeout: 90_000 },
  async () => {
    const scratch = mkdtempSync(join(tmpdir(), "floret-tenants-"));
    const { child, ready } = startServer(scratch);
    try {
      const origin = await ready;
      const alice = threadClient({ baseUrl: `${origin}/api` });
      const bob = threadClient({
        baseUrl: `${origin}/api`,
        headers: { cookie: "floret_user=bob" },
      });
      const { threadId, view } = await alice.create({ requestKey: "k", title: "Alice only" });
      assert.equal(view.tenant, "tenant-alice");
      await assert.rejects(
        bob.view(threadId),
        (error: { code?: string }) => error.code === "thread_not_found",
      );
      assert.deepEqual((await bob.list()).threads, []);
      // Bob's replay of Alice's key is his own new thread.
      const bobs = await bob.create({ requestKey: "k", title: "Alice only" });
      assert.notEqual(bobs.threadId, threadId);
      assert.equal((await alice.list()).threads.length, 1);
      // An unknown user is refused.
      const stranger = threadClient({
        baseUrl: `${origin}/api`,
        headers: { cookie: "floret_user=mallory" },
      });
      await assert.rejects(
        stranger.list(),
        (error: { code?: string }) => error.code === "forbidden",
      );
      assert.equal(await getWithHost(origin, "/api/threads", "evil.example"), 403);
      assert.equal(await getWithHost(origin, "/", "evil.example:8787"), 403);
      assert.equal(
        await getWithHost(origin, "/api/threads", `localhost:${new URL(origin).port}`),
        200,
      );
    } finally {
      await stopServer(child);
      rmSync(scratch, { recursive: true, force: true });
    }
  },
);
