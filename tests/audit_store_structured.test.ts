/**
 * Store audit: `ToolResult.structured` reads back as the handler returned it
 * (DESIGN §10: "readable, decoded, live and after reload") for every kind of
 * value the journal carries — undefined (as a property, in arrays), -0, NaN,
 * ±Infinity, BigInt, Date (valid and invalid), RegExp, Map (object keys),
 * Set, nesting of those — in the live view, a history page, a fork, and after
 * a restart, on a memory store and on a libSQL file. The stored row is JSON.
 */
import { after, describe, test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { inspect, isDeepStrictEqual } from "node:util";
import { z } from "zod";
import {
  defineAgent,
  defineTool,
  type KvStore,
  memoryStore,
  openHost,
  type ThreadService,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";
import { idle, keepOpen, storedRows } from "./support/audit_store.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-store-structured-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of the value every kind of test returns. */
function value(): unknown {
  const key = { id: 1 };
  return {
    missing: undefined,
    list: [1, undefined, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
    zero: -0,
    big: -(2n ** 70n),
    dates: [new Date("2026-03-04T05:06:07.089Z"), new Date(0)],
    invalid: new Date(Number.NaN),
    pattern: /a+b?/giu,
    map: new Map<unknown, unknown>([[key, new Set([1, "one", new Date(0)])], ["k", [undefined]]]),
    nested: { deeper: { map: new Map([[1n, { x: undefined }]]) } },
    text: "ünïcode \u{1F600} \u2028",
  };
}

const tool = defineTool({
  name: "values",
  description: "Every kind of structured value",
  input: z.object({}),
  execute: () => ({ output: "values", structured: value() }),
});

const agent = () =>
  defineAgent({
    id: "structured",
    systemPrompt: "Values.",
    gateway: scriptedGateway([
      { toolCalls: [{ name: "values", arguments: {} }] },
      { text: "done" },
    ]),
    tools: [tool],
  });

/**
 * Deep strict equality, reported with inspect (the runner cannot print an
 * invalid Date), with the invalid Date checked apart: Node 20's deep equality
 * tells two invalid Dates apart (NaN !== NaN).
 */
function same(actual: unknown, expected: unknown, where: string): void {
  const { invalid, ...rest } = actual as { invalid?: unknown };
  assert.ok(invalid instanceof Date && Number.isNaN(invalid.getTime()), `${where}: invalid Date`);
  const { invalid: _, ...wanted } = expected as { invalid?: unknown };
  if (isDeepStrictEqual(rest, wanted)) return;
  assert.fail(`${where}: ${inspect(rest, { depth: 9 })} is not ${inspect(wanted, { depth: 9 })}`);
}

async function structuredOf(threads: ThreadService, threadId: string): Promise<unknown[]> {
  const view = await threads.view(threadId);
  const page = await threads.history(threadId, { limit: 10 });
  return [view, page].map((shown) =>
    shown.items.find((item) => item.kind === "tool")?.tool?.structured
  );
}

const BACKENDS: { name: string; open(): KvStore }[] = [
  { name: "memory", open: () => memoryStore() },
  { name: "libSQL file", open: () => libsqlStore({ url: `file:${join(dir, "structured.db")}` }) },
];

describe("store audit: structured tool results read back as returned", () => {
  for (const backend of BACKENDS) {
    test(`on ${backend.name}: live, in pages, in a fork and after a restart`, async () => {
      const store = backend.open();
      const host = await openHost({ store: keepOpen(store) });
      const threads = host.threads({ agent: agent() });
      const { threadId } = await threads.create({ requestKey: "create" });
      await threads.send({ threadId, requestKey: "send", input: { text: "values" } });
      await idle(threads, threadId);
      const expected = value();
      for (const shown of await structuredOf(threads, threadId)) same(shown, expected, "live");
      const fork = await threads.fork({ threadId, requestKey: "fork" });
      for (const shown of await structuredOf(threads, fork.threadId)) same(shown, expected, "fork");
      for (const [key, row] of await storedRows(store)) {
        if (row !== "") assert.doesNotThrow(() => JSON.parse(row), key);
      }
      await host.shutdown();
      const again = await openHost({ store: keepOpen(store) });
      const restarted = again.threads({ agent: agent() });
      for (const id of [threadId, fork.threadId]) {
        for (const shown of await structuredOf(restarted, id)) same(shown, expected, "restarted");
      }
      await again.shutdown();
      await store.close();
    });
  }
});
