/**
 * `view.context` of an idle thread is kept between views (its estimate
 * projects the whole path): it must still follow every turn,
 * and a host changing one view's figures must not change the next view's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { words } from "./support/context_gateway.ts";
import { setup } from "./support/context_host.ts";

test("view.context follows new turns and survives hosts changing it", async () => {
  const e = await setup();
  e.gateway.answers.push({ text: words(200, "long") }, { text: words(400, "more") });
  const first = await e.say("first question");
  const again = await e.threads.waitForIdle(e.threadId);
  assert.deepEqual(again.context, first.context);
  const figures = (await e.threads.context(e.threadId)).estimateTokens;
  assert.equal(first.context?.estimateTokens, figures);

  // A host scribbling on its copy changes nothing the engine keeps.
  const kept = structuredClone(again.context);
  for (const view of [first, again]) {
    view.context!.estimateTokens = -1;
    if (view.context!.confirmed) view.context!.confirmed.inputTokens = -1;
  }
  const third = await e.threads.waitForIdle(e.threadId);
  assert.deepEqual(third.context, kept);

  const second = await e.say("second question");
  assert.ok(
    second.context!.estimateTokens > kept!.estimateTokens,
    `${second.context!.estimateTokens} > ${kept!.estimateTokens}`,
  );
  assert.equal(
    second.context!.estimateTokens,
    (await e.threads.context(e.threadId)).estimateTokens,
  );
  await e.host.shutdown();
});
