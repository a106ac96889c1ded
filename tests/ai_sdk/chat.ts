/**
 * The AI SDK's own chat client (package `ai`, v7), for tests and the example.
 *
 * `ai@7` declares `engines.node >= 22`, and the repository's root install
 * must stay free of EBADENGINE warnings on Node 20, so `ai` is not a root dev
 * dependency: it lives in this folder's own package (`package.json` and
 * lockfile here), installed by `scripts/test.mjs` with `npm ci --prefix
 * tests/ai_sdk` (or by hand). Modules in this folder import `ai`, which Node,
 * Bun and Deno (`nodeModulesDir: "manual"`) all resolve from the nearest
 * `node_modules`: this folder's.
 *
 * `AbstractChat` is the framework-free chat behind `useChat`; {@link TestChat}
 * gives it the plain array state a React or Vue binding would give it.
 */
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
} from "ai";

export {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";
export type { UIMessage } from "ai";

/** A chat state held in plain fields (what `useChat` keeps in React state). */
class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[];
  constructor(messages: UIMessage[] = []) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's chat with a plain state: `useChat` without React. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    const { messages, ...rest } = init;
    super({ ...rest, state: new ArrayState(messages) });
  }

  /** Resolves once the chat is neither `submitted` nor `streaming` (automatic sends included). */
  async settled(timeoutMs = 10_000): Promise<ChatStatus> {
    const deadline = Date.now() + timeoutMs;
    while (this.status === "submitted" || this.status === "streaming") {
      if (Date.now() > deadline) throw new Error(`chat still ${this.status}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.status;
  }
}

/** Anything that answers a Request the way a hono app does. */
export type FetchApp = { request(input: string, init?: RequestInit): Response | Promise<Response> };

/**
 * A `DefaultChatTransport` for the thread's chat route, whose fetch goes to
 * `app` in-process (no socket): `api` is `/threads/:threadId/chat`, so the
 * resume URL is the SDK's default `<api>/<chatId>/stream`.
 *
 * @param app the `threadApi` app
 * @param threadId the thread the chat drives
 * @param headers headers every request carries (tokens)
 */
export function floretTransport(
  app: FetchApp,
  threadId: string,
  headers: Record<string, string> = {},
): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({
    api: `http://floret.test/threads/${threadId}/chat`,
    headers,
    fetch: (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      return Promise.resolve(app.request(url, init));
    },
  });
}
