// Attachment bytes that do not match their declared media type are
// invalid_input and change nothing (DESIGN §11).
import { test } from "node:test";
import assert from "node:assert/strict";
import { FloretError } from "@floret/engine";
import { engine } from "./support/engine.ts";

test("an attachment whose bytes are not its declared image type is invalid_input", async () => {
  const e = await engine([{ text: "ok" }]);
  const gif = btoa("GIF89a\x01\x00\x01\x00");
  for (const mediaType of ["image/png", "image/jpeg", "image/webp"] as const) {
    await assert.rejects(
      e.threads.send({
        threadId: e.threadId,
        requestKey: `bad-${mediaType}`,
        input: { text: "look", attachments: [{ type: "image", mediaType, dataBase64: gif }] },
      }),
      (error: unknown) => error instanceof FloretError && error.code === "invalid_input",
    );
  }
  assert.equal((await e.threads.view(e.threadId)).items.length, 0);
  await e.host.shutdown();
});
