// fallbackTitle takes the first non-empty line, collapsed, cut to
// MAX_FALLBACK_TITLE code points, else an attachment's name: checked against
// a plain restatement of that rule on awkward inputs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fallbackTitle, MAX_FALLBACK_TITLE } from "../src/projection/view/title_state.ts";
import type { AdmittedInput } from "../src/journal/entries.ts";

function reference(input: AdmittedInput): string | undefined {
  const collapse = (text: string): string => text.replace(/\s+/g, " ").trim();
  const line = input.text.split(/\r\n|\r|\n/).map(collapse).find((text) => text !== "");
  const name = (input.attachments ?? [])
    .map((attachment) => (attachment as { name?: unknown } | null)?.name)
    .find((value): value is string => typeof value === "string" && collapse(value) !== "");
  const text = line ?? (name === undefined ? undefined : collapse(name));
  if (text === undefined) return undefined;
  const chars = Array.from(text);
  return chars.length <= MAX_FALLBACK_TITLE ? text : chars.slice(0, MAX_FALLBACK_TITLE).join("");
}

test("fallbackTitle: first non-empty line, collapsed and cut by code points, else a name", () => {
  const emoji = "\u{1F600}";
  const texts = [
    "Hello",
    "  \n\r\n \t Plan   my\ttrip \r second line",
    "",
    " \n \r\n ",
    "x".repeat(MAX_FALLBACK_TITLE),
    "x".repeat(MAX_FALLBACK_TITLE + 1),
    emoji.repeat(MAX_FALLBACK_TITLE / 2),
    emoji.repeat(MAX_FALLBACK_TITLE - 1) + "ab",
    emoji.repeat(MAX_FALLBACK_TITLE + 3),
    "a" + " ".repeat(500) + "b",
  ];
  const attachments = [
    undefined,
    [],
    [{ name: "  " }, { name: " report\n.pdf " }],
    [{ type: "image" }, null, { name: 7 }],
  ] as AdmittedInput["attachments"][];
  for (const text of texts) {
    for (const list of attachments) {
      const input: AdmittedInput = { text };
      if (list !== undefined) input.attachments = list;
      assert.equal(fallbackTitle(input), reference(input), JSON.stringify(input).slice(0, 80));
    }
  }
  assert.equal(fallbackTitle({ text: "  a\n b" }), "a");
  assert.equal(fallbackTitle({ text: " " }), undefined);
});
