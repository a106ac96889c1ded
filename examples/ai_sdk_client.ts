/**
 * A durable Floret thread driven by the AI SDK's own chat client, offline (a
 * scripted model, an in-memory store, no socket): `AbstractChat` is the chat
 * behind `useChat`, `DefaultChatTransport` posts to the thread's chat route.
 * It sends a message (a tool runs on the server), regenerates the answer,
 * answers an `ask_user` question with `addToolOutput`, and asks to resume
 * (nothing runs, so nothing to resume). docs/ai-sdk.md explains each step.
 *
 *   npx tsx examples/ai_sdk_client.ts     bun examples/ai_sdk_client.ts
 *   deno run -A examples/ai_sdk_client.ts
 *
 * In your app, import these from "ai" (or use `useChat` from "@ai-sdk/react").
 * This repository keeps `ai@7` in tests/ai_sdk's own package (`npm ci --prefix
 * tests/ai_sdk` installs it; `npm test` does it for you).
 */
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { threadApi } from "@floret/engine/http";
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  TestChat as Chat,
  type UIMessage,
} from "../tests/ai_sdk/chat.ts";

const host = await openHost({ store: memoryStore() });
const threads = host.threads({
  agent: defineAgent({
    id: "helper",
    systemPrompt: "Be brief.",
    gateway: scriptedGateway([
      { text: "Let me add. ", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: "2 + 3 = 5." },
      { text: "Regenerated: five." },
      {
        toolCalls: [{
          name: "ask_user",
          arguments: {
            questions: [
              { id: "color", prompt: "Favourite colour?", options: ["red", "blue"] },
              { id: "pin", prompt: "Your PIN", secret: true },
            ],
          },
        }],
      },
      { text: "Noted: red (the PIN stays out of the thread's record)." },
    ]),
    tools: [defineTool({
      name: "add",
      description: "Add two numbers",
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => String(a + b),
    })],
  }),
});
const { threadId } = await threads.create({ requestKey: "create" });
const app = threadApi(threads, { authorize: () => true });

const chat = new Chat({
  id: "chat-1",
  transport: new DefaultChatTransport({
    // The resume URL is the SDK's default: `${api}/${chatId}/stream`.
    api: `http://localhost/threads/${threadId}/chat`,
    // In-process, no socket; a browser would use its own fetch and a real URL.
    fetch: (input, init) =>
      Promise.resolve(app.request(input instanceof Request ? input.url : String(input), init)),
  }),
  // Post again by itself once approvals are answered or tool outputs given.
  sendAutomaticallyWhen: (options) =>
    lastAssistantMessageIsCompleteWithApprovalResponses(options) ||
    lastAssistantMessageIsCompleteWithToolCalls(options),
});

const show = (label: string, message: UIMessage | undefined): void => {
  const parts = (message?.parts ?? []).map((part) =>
    part.type === "text"
      ? JSON.stringify((part as { text: string }).text)
      : part.type.startsWith("tool-")
      ? `[${part.type} ${(part as { state: string }).state}]`
      : `[${part.type}]`
  );
  console.log(`${label}: ${parts.join(" ")}`);
};

await chat.sendMessage({ text: "What is 2 + 3?" });
show("answer", chat.messages.at(-1));

await chat.regenerate();
show("regenerated", chat.messages.at(-1));

await chat.sendMessage({ text: "Remember my colour." });
const question = chat.messages.at(-1)!.parts.find((part) => part.type === "tool-ask_user") as {
  toolCallId: string;
  input: { questions: { id: string; prompt: string }[] };
};
console.log(`asked: ${question.input.questions.map((q) => q.prompt).join(" / ")}`);
await chat.addToolOutput({
  tool: "ask_user",
  toolCallId: question.toolCallId,
  output: { color: "red", pin: "1234" },
});
await chat.settled();
show("after the answers", chat.messages.at(-1));

await chat.resumeStream();
console.log(`resume with nothing running: ${chat.status}, ${chat.messages.length} messages`);
const view = await threads.view(threadId);
console.log(`thread: ${view.turns.length} turns, status ${view.status}`);
await host.shutdown();
