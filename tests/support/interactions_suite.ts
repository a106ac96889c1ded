/**
 * The interactions and turn-control suite: approve, deny, ask-user (a secret
 * answer included), respond replays and conflicts, queue edits, steering,
 * manual compaction and context figures. It runs twice: on the in-process
 * service (service_interactions.test.ts) and through `threadClient` over
 * `threadApi` (http_interactions.test.ts), so a host that swaps one for the
 * other sees the same behaviour, errors included.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { LocalThreadService, ThreadService } from "@floret/engine";
import { engine as inProcessEngine, lastTurn, type TestEngine, until } from "./engine.ts";
import {
  askUser,
  decide,
  isCode,
  sendText,
  sendWait,
  settle,
  toolMessages,
  tools,
  userTexts,
  writeCall,
  writeEngine,
} from "./interactions.ts";

/** A test engine whose service has turn control too. */
type Engine = TestEngine & { threads: LocalThreadService };

/**
 * Registers the suite.
 *
 * @param wrap turns the in-process service into the one the tests use
 */
export function interactionsSuite(wrap: (threads: ThreadService) => ThreadService): void {
  const engine = async (...args: Parameters<typeof inProcessEngine>): Promise<Engine> => {
    const e = await inProcessEngine(...args);
    return { ...e, threads: wrap(e.threads) as LocalThreadService };
  };

  describe("approvals through the service", () => {
    test("approve runs the call once; replays answer again, another decision conflicts, unknown ids are not found", async () => {
      const { e, ran } = await writeEngine([writeCall("a", "c1"), { text: "done" }], engine);
      const waiting = await sendWait(e, "go");
      assert.equal(waiting.status, "waiting");
      assert.deepEqual(ran, []);
      const [pending] = waiting.pending;
      assert.equal(pending.kind, "approval");
      assert.equal(pending.toolName, "write");
      assert.equal(tools(waiting)[0].status, "waiting_approval");

      const approve = {
        threadId: e.threadId,
        requestKey: "r1",
        interactionId: pending.id,
        decision: "approve" as const,
      };
      const { view } = await e.threads.respond(approve);
      assert.equal(view.status, "running");
      const done = await settle(e);
      assert.equal(done.status, "idle");
      assert.deepEqual(ran, ["a"]);
      assert.deepEqual(lastTurn(done), { outcome: "completed", code: undefined });
      assert.equal(toolMessages(e.gateway.requests[1].messages)[0].output, "wrote a");

      await e.threads.respond(approve);
      await e.threads.respond({ ...approve, requestKey: "r1-again" });
      await assert.rejects(
        e.threads.respond({ ...approve, requestKey: "r2", decision: "deny" }),
        isCode("request_conflict"),
      );
      await assert.rejects(
        e.threads.respond({ ...approve, requestKey: "r3", interactionId: "interaction_nope" }),
        isCode("interaction_not_found"),
      );
      await assert.rejects(
        e.threads.respond({ ...approve, requestKey: "r4", decision: "maybe" as "approve" }),
        isCode("invalid_input"),
      );
      assert.deepEqual(ran, ["a"], "replays run nothing");
      await e.host.shutdown();
    });

    test("deny runs nothing and tells the model; the turn completes", async () => {
      const { e, ran } = await writeEngine([writeCall("no", "c1"), { text: "understood" }], engine);
      const waiting = await sendWait(e, "go");
      await decide(e, waiting.pending[0].id, "deny", "deny");
      const done = await settle(e);
      assert.equal(done.status, "idle");
      assert.deepEqual(ran, []);
      assert.deepEqual(done.pending, []);
      assert.notEqual(tools(done)[0].status, "completed");
      assert.match(toolMessages(e.gateway.requests[1].messages)[0].output, /den/i);
      assert.equal(done.items.at(-1)?.text, "understood");
      await e.host.shutdown();
    });
  });

  describe("ask-user through the service", () => {
    test("answers reach the model once; a secret answer never shows in the view; bad answers write nothing", async () => {
      const SECRET = "suite-secret-Kx81";
      const e = await engine([
        askUser([
          { id: "color", prompt: "Colour?", options: ["red", "blue"] },
          { id: "pw", prompt: "Password?", secret: true },
        ]),
        { text: "thanks" },
      ]);
      const waiting = await sendWait(e, "ask me");
      assert.equal(waiting.status, "waiting");
      const [question] = waiting.pending;
      assert.equal(question.kind, "input");
      assert.deepEqual(question.questions?.map((q) => [q.id, q.secret === true]), [
        ["color", false],
        ["pw", true],
      ]);
      const answer = {
        threadId: e.threadId,
        requestKey: "a1",
        interactionId: question.id,
      };
      await assert.rejects(
        e.threads.respond({ ...answer, answers: [{ questionId: "color", value: "green" }] }),
        isCode("invalid_input"),
      );
      assert.equal((await e.threads.view(e.threadId)).status, "waiting", "nothing changed");
      await e.threads.respond({
        ...answer,
        answers: [{ questionId: "color", value: "blue" }, { questionId: "pw", value: SECRET }],
      });
      const done = await settle(e);
      assert.equal(done.status, "idle");
      const resumed = e.gateway.requests[1].messages;
      assert.equal(userTexts(resumed).filter((t) => t.includes("blue")).length, 1);
      assert.ok(JSON.stringify(resumed).includes(SECRET), "the resumed run sees the secret");
      assert.ok(!JSON.stringify(done).includes(SECRET), "the view never shows it");
      const page = await e.threads.history(e.threadId);
      assert.ok(!JSON.stringify(page).includes(SECRET), "nor does history");
      await e.host.shutdown();
    });
  });

  describe("the queue and steering through the service", () => {
    test("editQueued replaces a queued text when expectedText matches; stale edits conflict; steer joins the running turn", async () => {
      const e = await engine([{ hang: true }, { text: "steered" }, { text: "next" }]);
      await sendText(e, "one", "one");
      const queued = await sendText(e, "two", "two");
      assert.equal(queued.queued, true);
      const queueId = queued.view.queue[0].id;
      const edit = {
        threadId: e.threadId,
        requestKey: "edit",
        queueId,
        text: "two, edited",
        expectedText: "two",
      };
      const { view } = await e.threads.editQueued(edit);
      assert.equal(view.queue[0].text, "two, edited");
      assert.equal((await e.threads.editQueued(edit)).view.queue[0].text, "two, edited");
      await assert.rejects(
        e.threads.editQueued({ ...edit, requestKey: "edit-stale" }),
        isCode("request_conflict"),
      );
      await assert.rejects(
        e.threads.editQueued({ ...edit, requestKey: "edit-none", queueId: "queue_nope" }),
        isCode("invalid_input"),
      );

      await e.threads.steer({ threadId: e.threadId, requestKey: "steer", text: "be quick" });
      await until(e, (v) => v.queue.length === 0 && v.status === "idle", 10_000);
      const steered = e.gateway.requests[1].messages;
      assert.ok(userTexts(steered).some((t) => t.includes("be quick")), "steer joined request 2");
      const third = e.gateway.requests[2].messages;
      assert.ok(userTexts(third).includes("two, edited"), "the edited text ran");
      assert.ok(!userTexts(third).includes("two"));
      await assert.rejects(
        e.threads.steer({ threadId: e.threadId, requestKey: "steer-idle", text: "x" }),
        isCode("invalid_input"),
      );
      await e.host.shutdown();
    });
  });

  describe("compaction and context through the service", () => {
    test("compact below the target is a noop that replays; context names the window and totals", async () => {
      const e = await engine([{ text: "short answer" }]);
      await sendWait(e, "hello");
      const compact = { threadId: e.threadId, requestKey: "compact" };
      const first = await e.threads.compact(compact);
      assert.equal(first.outcome, "noop");
      assert.equal((await e.threads.compact(compact)).outcome, "noop");
      await assert.rejects(
        e.threads.compact({ ...compact, requestKey: "send:hello" }),
        isCode("request_conflict"),
      );
      const figures = await e.threads.context(e.threadId);
      assert.ok(figures.windowTokens > 0);
      assert.ok(figures.estimateTokens > 0);
      assert.ok(figures.estimateTokens < figures.windowTokens);
      assert.equal(typeof figures.totals.inputTokens, "number");
      assert.ok(Array.isArray(figures.compactions));
      await assert.rejects(e.threads.context("thread_nope"), isCode("thread_not_found"));
      await e.host.shutdown();
    });
  });
}
