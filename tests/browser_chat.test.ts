// The example chat page in a real headless Chromium: a message streams in, a
// reload in the middle of the stream rebuilds the same conversation from the
// view, and the cancel button stops a turn. Playwright drives the browser from
// Node; the test skips, saying why, on Deno and Bun and where no Chromium is
// installed (`.ci/run` installs Debian's `chromium` when it can).
//
// FLORET_SCREENSHOT=path also saves a picture of the finished page there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Page } from "playwright-core";
import { startServer, stopServer } from "./support/example_server.ts";
import { skipBecause } from "./support/skip.ts";

const CHROMIUM_PATHS = [
  process.env.CHROMIUM_PATH,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
];
const chromium = CHROMIUM_PATHS.find((path) => path && existsSync(path));
const skip = skipBecause(
  import.meta.url,
  "Deno" in globalThis || "Bun" in globalThis
    ? "the browser test runs under Node, where Playwright drives Chromium"
    : chromium === undefined
    ? "no Chromium found (install it: `apt-get install chromium`, or set CHROMIUM_PATH)"
    : false,
);

/** A message the example's echo model streams back word by word (40 ms a word). */
function longMessage(words: number, label: string): string {
  return `${label} ` + Array.from({ length: words }, (_, i) => `word${i}`).join(" ");
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill("#text", text);
  await page.press("#text", "Enter");
}

const lastAssistant = (page: Page) => page.locator(".item.assistant").last();

test(
  "the chat page streams, recovers after a reload mid-stream, cancels, approves a tool call and answers a form",
  {
    skip,
    timeout: 120_000,
  },
  async () => {
    const { chromium: browserType } = await import("playwright-core");
    const scratch = mkdtempSync(join(tmpdir(), "floret-browser-"));
    const { child, ready } = startServer(scratch);
    const browser = await browserType.launch({
      executablePath: chromium,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu"],
    });
    try {
      const origin = await ready;
      const page = await browser.newPage();
      await page.goto(`${origin}/`);

      // 1. Text streams in: the assistant item grows while the thread runs.
      const story = longMessage(80, "story");
      await send(page, story);
      await page.locator(".item.user", { hasText: "story word0" }).waitFor();
      await lastAssistant(page).filter({ hasText: "word5" }).waitFor();
      assert.equal(await page.textContent("#status"), "running");
      const partial = (await lastAssistant(page).textContent()) ?? "";
      assert.ok(!partial.includes("word79"), "still streaming when the page reloads");

      // 2. Reload in the middle: the page comes back to the same thread from its view,
      // and the rest of the answer keeps streaming into it.
      const threadUrl = page.url();
      assert.match(threadUrl, /#thread_/);
      await page.reload();
      assert.equal(page.url(), threadUrl);
      await page.locator(".item.user", { hasText: "story word0" }).waitFor();
      await lastAssistant(page).filter({ hasText: "word79" }).waitFor({ timeout: 30_000 });
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();
      assert.equal((await lastAssistant(page).textContent())?.trim(), `You said: ${story}`);
      assert.equal(await page.locator(".item.user").count(), 1);

      // 3. Cancel stops a streaming turn.
      await send(page, longMessage(200, "long"));
      await lastAssistant(page).filter({ hasText: "You said: long word0 word1 word2" }).waitFor();
      // A message sent meanwhile waits in the queue, where it can be edited and removed.
      await send(page, "queued message");
      const queued = page.locator("#queue .queued");
      await queued.filter({ hasText: "queued message" }).waitFor();
      page.once("dialog", (dialog) => void dialog.accept("queued, edited"));
      await queued.locator("button", { hasText: "Edit" }).click();
      await queued.filter({ hasText: "queued, edited" }).waitFor();
      await queued.locator("button", { hasText: "Remove" }).click();
      await queued.waitFor({ state: "detached" });
      await page.click("#cancel");
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();
      const threadId = decodeURIComponent(new URL(page.url()).hash.slice(1));
      const view = await (await fetch(`${origin}/api/threads/${threadId}`)).json();
      assert.equal(view.turns.at(-1).outcome, "cancelled");
      assert.equal(view.turns.length, 2);

      // 4. In a new thread, a tool call shows as a tool item, then the answer.
      await page.click("#new");
      await page.waitForURL((url) => url.hash !== "" && url.hash !== new URL(threadUrl).hash);
      await page.locator(".item").first().waitFor({ state: "detached" });
      await send(page, "what is the weather in Lisbon");
      await page.locator(".item.tool", { hasText: "get_weather" }).waitFor();
      await lastAssistant(page).filter({ hasText: "The weather service says" }).waitFor();
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();

      // 5. A plan fills the todo list; a note needs approval: the tool item shows
      // Approve / Deny, and approving runs it once.
      await send(page, "plan my day");
      await page.locator(".todo.in_progress", { hasText: "Save a note" }).waitFor();
      assert.equal(await page.locator("#todos li").count(), 3);
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();
      await send(page, "note: buy milk");
      const noteItem = page.locator(".item.tool", { hasText: "save_note" });
      await noteItem.locator("button.approve").waitFor();
      await page.locator("#status", { hasText: /^waiting$/ }).waitFor();
      if (process.env.FLORET_SCREENSHOT) {
        await page.setViewportSize({ width: 1100, height: 700 });
        await page.screenshot({ path: process.env.FLORET_SCREENSHOT });
      }
      await noteItem.locator("button.approve").click();
      await lastAssistant(page).filter({ hasText: 'Done: Saved the note "buy milk".' }).waitFor();
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();
      assert.equal(await noteItem.locator("button.approve").count(), 0, "the buttons go away");
      assert.match((await noteItem.textContent()) ?? "", /completed/);

      // 6. A question set shows a form; the secret question is a password field.
      await send(page, "ask me something");
      const form = page.locator(".item.interaction form");
      await form.waitFor();
      assert.equal(await form.locator('input[name="token"]').getAttribute("type"), "password");
      await form.locator('input[name="name"]').fill("Ada");
      await form.locator('select[name="color"]').selectOption("green");
      await form.locator('input[name="token"]').fill("tok-secret-77");
      await form.locator("button").click();
      await lastAssistant(page).filter({ hasText: "Thanks, I have your answers." }).waitFor();
      await page.locator("#status", { hasText: /^idle$/ }).waitFor();
      const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
      const answered = await (await fetch(`${origin}/api/threads/${id}`)).text();
      assert.ok(answered.includes("Ada") && !answered.includes("tok-secret-77"));
    } finally {
      await browser.close();
      await stopServer(child);
      rmSync(scratch, { recursive: true, force: true });
    }
  },
);
