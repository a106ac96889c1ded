// Audit (round 11): the `context` component under a lone late observer. A
// manual compaction (a turn of its own, with a summary request) and the turn
// after it move the view's context figures; the observer, joined after the
// thread filled up (nobody listened before), must end with the view's
// figures and items, with no gap.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { fullThread } from "./support/context_host.ts";
import { Observer, stateOf } from "./support/audit_observer.ts";

describe("context figures under a late observer", () => {
  test("a manual compaction and the next turn reach an observer that joined when the thread was full", async () => {
    const e = await fullThread();
    const observer = await Observer.join(e.threads, e.threadId);
    const before = observer.local.context!.estimateTokens;
    const compacted = await e.threads.compact({ threadId: e.threadId, requestKey: "compact" });
    assert.equal(compacted.outcome, "compacted");
    let view = await e.threads.waitForIdle(e.threadId, { timeoutMs: 20_000 });
    await observer.reach(view);
    assert.ok(observer.local.context!.estimateTokens < before, "the estimate fell");
    assert.deepEqual(stateOf(observer.local), stateOf(view));
    view = await e.say("after the compaction");
    await observer.reach(view);
    assert.deepEqual(observer.problems, []);
    assert.equal(observer.resyncs, 0);
    assert.deepEqual(stateOf(observer.local), stateOf(view));
    await observer.leave();
    await e.host.shutdown();
  });
});
