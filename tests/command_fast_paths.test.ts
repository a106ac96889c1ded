/**
 * The direct checks of `create` and `send` input accept only what their zod
 * schemas accept, and return exactly what the schemas return (fields and
 * their order): compared over a grid of valid, borderline and invalid inputs.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { commandSchemas } from "../src/validation/command_schemas.ts";
import { fastCreate, fastSend } from "../src/validation/command_fast_paths.ts";

/** The value's JSON with every object's keys in their own order (deepEqual ignores order). */
function shape(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, field) =>
      field && typeof field === "object" && !Array.isArray(field)
        ? Object.fromEntries(
          Object.entries(field).map(([k, v]) => [k, v === undefined ? "<u>" : v]),
        )
        : field,
  );
}

class Carrier {
  constructor(fields: Record<string, unknown>) {
    Object.assign(this, fields);
  }
}

const ids: unknown[] = ["t", "thread_01", "", " t", "a\uD800", "\uDC00", "x\uD83D\uDE00", 5, null];
const keys: unknown[] = [
  "k",
  "",
  " ",
  " k",
  "k ",
  "\tk",
  "k\u00A0",
  "\uFEFFk",
  "a\uD800b",
  "\uDC00",
  "\uD83D\uDE00",
  "a".repeat(256),
  "a".repeat(257),
  7,
  null,
];
const texts: unknown[] = [
  "hi",
  "",
  "  ",
  "\n",
  " hi ",
  "\uD800",
  "a".repeat(1_000_000),
  "a".repeat(1_000_001),
  5,
  null,
];
const inputExtras: Record<string, unknown>[] = [
  {},
  { attachments: undefined },
  { attachments: [] },
  { extra: 1 },
  { references: undefined },
  { references: [] },
  { references: [{ kind: "thread", threadId: "t" }] },
  { context: [] },
  { context: [{ label: "l", text: "x" }] },
];
const extras: Record<string, unknown>[] = [
  {},
  { supplementalContext: undefined },
  { supplementalContext: [] },
  { supplementalContext: [{ title: "t", text: "x" }] },
  { junk: 1 },
  { title: undefined },
  { labels: undefined },
  { labels: {} },
  { labels: { a: "b" } },
];
type Wrap = (fields: Record<string, unknown>) => unknown;
const wraps: Wrap[] = [
  (fields) => fields,
  (fields) => Object.assign(Object.create(null), fields),
  (fields) => new Carrier(fields),
];

/** Asserts `fast` agrees with `schema` on `input`; returns whether it accepted. */
function agrees(
  fast: (input: unknown) => unknown,
  schema: { safeParse(input: unknown): { success: boolean; data?: unknown } },
  input: unknown,
): boolean {
  const accepted = fast(input);
  if (accepted === undefined) return false;
  const parsed = schema.safeParse(input);
  assert.ok(parsed.success, `fast path accepted what the schema rejects: ${shape(input)}`);
  assert.deepEqual(accepted, parsed.data);
  assert.equal(shape(accepted), shape(parsed.data));
  return true;
}

describe("command fast paths", () => {
  it("send: accepts only what the schema accepts, with the schema's result", () => {
    let accepted = 0;
    let declined = 0;
    for (const threadId of ids) {
      for (const requestKey of keys) {
        for (const text of texts) {
          for (const inputExtra of inputExtras) {
            for (const extra of extras) {
              for (const wrap of wraps) {
                for (const wrapInput of wraps) {
                  const input = wrap({
                    threadId,
                    requestKey,
                    input: wrapInput({ text, ...inputExtra }),
                    ...extra,
                  });
                  if (agrees(fastSend, commandSchemas.send, input)) accepted++;
                  else declined++;
                }
              }
            }
          }
        }
      }
    }
    for (const odd of [undefined, null, "send", [], { threadId: "t", requestKey: "k" }]) {
      assert.equal(fastSend(odd), undefined);
    }
    assert.ok(accepted > 0 && declined > 0, `${accepted} accepted, ${declined} declined`);
  });

  it("create: accepts only what the schema accepts, with the schema's result", () => {
    let accepted = 0;
    for (const requestKey of keys) {
      for (const extra of [...extras, { title: "A title" }, { title: "" }]) {
        for (const wrap of wraps) {
          if (agrees(fastCreate, commandSchemas.create, wrap({ requestKey, ...extra }))) accepted++;
        }
      }
    }
    for (const odd of [undefined, null, "create", [], {}]) {
      assert.equal(fastCreate(odd), undefined);
    }
    assert.ok(accepted > 0);
  });

  it("send: the common input is taken by the fast path", () => {
    const input = { threadId: "thread_1", requestKey: "1:send", input: { text: "add 1" } };
    assert.deepEqual(fastSend(input), input);
    assert.deepEqual(fastCreate({ requestKey: "1:create" }), { requestKey: "1:create" });
  });
});
