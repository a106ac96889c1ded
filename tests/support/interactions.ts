/**
 * Shared pieces of the interaction tests: a write tool that may need
 * approval, message filters, and a memory store two hosts can share.
 */
import { z } from "zod";
import {
  defineTool,
  isFloretError,
  type KvStore,
  type LocalThreadService,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import type { TestEngine } from "./engine.ts";

/** Matches a FloretError with this code. */
export const isCode = (code: string) => (error: unknown): boolean =>
  isFloretError(error) && error.code === code;

/** The tool parts of a view's items. */
export const tools = (view: ThreadView): NonNullable<ThreadView["items"][number]["tool"]>[] =>
  view.items.filter((item) => item.kind === "tool").map((item) => item.tool!);

/** The tool messages of a request. */
export const toolMessages = (messages: { role: string }[]) =>
  messages.filter((m) => m.role === "tool") as { role: "tool"; output: string; name: string }[];

/** The texts of a request's user messages. */
export const userTexts = (messages: { role: string }[]): string[] =>
  messages.filter((m) => m.role === "user").map((m) => (m as unknown as { text: string }).text);

/** A `write` tool that records its lines; by default every call needs approval. */
export function writeTool(ran: string[], permission: "ask" | "allow" = "ask"): ToolDefinition {
  return defineTool({
    name: "write",
    description: "Write a line",
    effect: "write",
    input: z.object({ line: z.string() }),
    permission,
    execute: ({ line }) => {
      ran.push(line);
      return `wrote ${line}`;
    },
  });
}

/** The engine's in-process service, with turn control (`steer`, `editQueued`). */
export const local = (e: TestEngine): LocalThreadService => e.threads as LocalThreadService;

/** Sends and waits until the thread is idle or waiting. */
export async function sendWait(e: TestEngine, text: string): Promise<ThreadView> {
  await e.threads.send({ threadId: e.threadId, requestKey: `send:${text}`, input: { text } });
  return await e.threads.waitForIdle(e.threadId, { timeoutMs: 10_000 });
}

/** Whether `needle` occurs in `haystack`. */
export function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** A store whose close() does nothing, so a second host can reopen the same memory. */
export function keepOpen(store: KvStore): KvStore {
  return {
    getMany: (keys) => store.getMany(keys),
    list: (selector, options) => store.list(selector, options),
    commit: (op) => store.commit(op),
    close: async () => {},
  };
}
