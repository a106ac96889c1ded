// threadClient rejects with a FloretError when its headers function throws,
// and sends nothing (DESIGN §11).
import { test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { threadClient } from "@floret/engine/http";

test("a throwing headers function rejects the call with a FloretError", async () => {
  let sent = 0;
  for (
    const headers of [
      () => {
        throw new Error("token refresh failed");
      },
      () => Promise.reject(new Error("token refresh failed")),
    ]
  ) {
    const client = threadClient({
      baseUrl: "http://127.0.0.1:1",
      fetch: () => {
        sent++;
        return new Response("{}");
      },
      headers,
    });
    await assert.rejects(client.list(), (error: unknown) => error instanceof FloretError);
    await assert.rejects(
      client.create({ requestKey: "k" }),
      (error: unknown) => error instanceof FloretError,
    );
  }
  assert.equal(sent, 0);
});
