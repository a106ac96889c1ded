/**
 * Floret over HTTP: serves the thread API at `/api` and a small chat page at
 * `/`, on whichever runtime runs it.
 *
 *   deno run -A examples/server.ts      bun ./examples/server.ts
 *   npx tsx examples/server.ts          (Node, through @hono/node-server)
 *
 * Listens on 127.0.0.1:PORT (default 8787; 0 picks a free port). The journal is a libSQL file in
 * the temporary folder, or `FLORET_DB_URL` (`file:`, `libsql://`, `http(s)://`;
 * `FLORET_DB_TOKEN` for its auth token). The model is scripted (it echoes, and
 * calls `get_weather` when a message mentions weather) unless OPENAI_API_KEY is
 * set (OPENAI_MODEL, default gpt-4.1-mini). Try "weather in Lisbon", "note: buy
 * milk" (an approval), "ask me" (a form with a secret field) and "plan" (todos).
 *
 * Two demo users, alice (the default) and bob (open `/?user=bob`; `/?user=alice`
 * switches back), each see only their own threads. Only requests whose `Host`
 * is 127.0.0.1, localhost or [::1] are answered (DNS rebinding).
 */
import { z } from "zod";
import { defineAgent, defineTool, type Gateway, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { threadApi } from "@floret/engine/http";
import { chatPage } from "./chat_page.ts";

const env = (name: string): string | undefined => globalThis.process?.env?.[name];
const port = Number(env("PORT") ?? 8787);
const hostname = "127.0.0.1";
const dbUrl = env("FLORET_DB_URL") ??
  `file:${env("TMPDIR") ?? "/tmp"}/floret-server-example.db`;

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city (a canned demo answer).",
  input: z.object({ city: z.string() }),
  effect: "read",
  execute: ({ city }) => JSON.stringify({ city, temperatureC: city.length + 10, sky: "clear" }),
});

const note = defineTool({
  name: "save_note",
  description: "Save a note for the user (asks the user first).",
  input: z.object({ text: z.string() }),
  effect: "write",
  // Every call waits for the user's approval: the page shows Approve / Deny.
  permission: "ask",
  execute: ({ text }) => `Saved the note "${text}".`,
});

/** A tool call the stand-in model makes when a message asks for it. */
function scriptedCall(text: string): { name: string; args: unknown } | undefined {
  if (/weather/i.test(text)) {
    return { name: "get_weather", args: { city: /in ([A-Z][a-z]+)/.exec(text)?.[1] ?? "Lisbon" } };
  }
  const noted = /note:?\s+(.+)/i.exec(text);
  if (noted) return { name: "save_note", args: { text: noted[1] } };
  if (/ask me/i.test(text)) {
    return {
      name: "ask_user",
      args: {
        questions: [
          { id: "name", prompt: "What should I call you?" },
          { id: "color", prompt: "Favourite colour?", options: ["red", "green", "blue"] },
          { id: "token", prompt: "An access token (kept secret)", secret: true },
        ],
      },
    };
  }
  if (/plan/i.test(text)) {
    return {
      name: "todo_write",
      args: {
        todos: [
          { text: "Check the weather", status: "done" },
          { text: "Save a note", status: "in_progress" },
          { text: "Ask the user a few questions", status: "pending" },
        ],
      },
    };
  }
  return undefined;
}

/** What the stand-in model says once a tool has answered. */
function afterTool(name: string, output: string): string {
  if (name === "get_weather") return `The weather service says: ${output}`;
  if (name === "todo_write") return "Here is the plan; the list is on the right.";
  return `Done: ${output}`;
}

/**
 * A stand-in model: echoes the user, and calls a tool when a message mentions
 * the weather, a note, a plan or "ask me".
 */
function echoGateway(): Gateway {
  return {
    info: { provider: "example", model: "echo", stateKey: "example:echo", capabilities: {} },
    async *stream(request, { signal }) {
      const last = request.messages.at(-1);
      const pause = () => new Promise((resolve) => setTimeout(resolve, 40));
      const call = last?.role === "user" ? scriptedCall(last.text) : undefined;
      if (call) {
        const callId = `call_${crypto.randomUUID()}`;
        yield { type: "tool-call-start", callId, name: call.name };
        yield { type: "tool-call-delta", callId, argumentsDelta: JSON.stringify(call.args) };
        yield { type: "tool-call-end", callId };
        yield { type: "finish", reason: "tool_calls" };
        return;
      }
      const text = last?.role === "tool"
        ? afterTool(last.name, last.output)
        : last?.role === "user" && last.text.startsWith("The user answered:")
        // Never echo answers back: a secret one reaches this request in clear.
        ? "Thanks, I have your answers."
        : `You said: ${last?.role === "user" ? last.text : ""}`;
      for (const word of text.match(/\S+\s*/g) ?? []) {
        signal.throwIfAborted();
        await pause();
        yield { type: "text", delta: word };
      }
      yield { type: "finish", reason: "stop" };
    },
  };
}

async function chooseGateway(): Promise<Gateway> {
  const apiKey = env("OPENAI_API_KEY");
  if (!apiKey) return echoGateway();
  const { openAIChat } = await import("@floret/engine/openai");
  return openAIChat({ model: env("OPENAI_MODEL") ?? "gpt-4.1-mini", apiKey });
}

const host = await openHost({
  store: libsqlStore({ url: dbUrl, authToken: env("FLORET_DB_TOKEN") }),
});
const threads = host.threads({
  agent: defineAgent({
    id: "server-example",
    systemPrompt: "You are a helpful assistant. Use get_weather for weather questions and " +
      "save_note when the user asks you to note something.",
    gateway: await chooseGateway(),
    tools: [weather, note],
    // The model keeps the thread goal (shown in the page's side panel) and reviews it before stopping.
    goals: true,
  }),
});
/**
 * The demo's two users, each its own tenant: a request names its user with
 * the `floret_user` cookie (open `/?user=bob` to switch; the default is
 * alice). HOOK: a real server checks a session or a bearer token here, in
 * front of the API, and never trusts a name the client picks.
 */
const USERS: Record<string, string> = { alice: "tenant-alice", bob: "tenant-bob" };
function userOf(request: Request): string | undefined {
  const cookie = request.headers.get("cookie") ?? "";
  const named = /(?:^|;\s*)floret_user=([a-z]+)/.exec(cookie)?.[1] ?? "alice";
  return named in USERS ? named : undefined;
}

/**
 * Host names this server answers to. A page on another site whose DNS name
 * is re-pointed at 127.0.0.1 (DNS rebinding) sends its own name in `Host`,
 * which this list refuses. Add names with FLORET_ALLOWED_HOSTS (comma-separated).
 */
const allowedHosts = new Set([
  "127.0.0.1",
  "localhost",
  "[::1]",
  ...(env("FLORET_ALLOWED_HOSTS") ?? "").split(",").map((h) => h.trim()).filter(Boolean),
]);
function hostAllowed(request: Request): boolean {
  const host = request.headers.get("host");
  if (host === null) return false;
  return allowedHosts.has(host.replace(/:\d+$/, "").toLowerCase());
}

const api = threadApi(threads, {
  basePath: "/api",
  // The page edits queued messages (PATCH /api/threads/:id/queue/:queueId).
  turnControl: true,
  // Each user is a tenant: their threads are theirs alone (another user's are
  // 404). Requests other sites' pages make are refused too.
  authorize: ({ request }) => {
    if (request.headers.get("sec-fetch-site") === "cross-site") return false;
    const user = userOf(request);
    return user === undefined ? false : { tenant: USERS[user] };
  },
});
const page = chatPage("/api");
const fetch = (request: Request): Response | Promise<Response> => {
  if (!hostAllowed(request)) {
    return Response.json({ error: { code: "forbidden", message: "Unknown host" } }, {
      status: 403,
    });
  }
  const url = new URL(request.url);
  if (url.pathname !== "/") return api.fetch(request);
  const headers = new Headers({ "content-type": "text/html; charset=utf-8" });
  const chosen = url.searchParams.get("user");
  if (chosen !== null && chosen in USERS) {
    headers.set("set-cookie", `floret_user=${chosen}; Path=/; SameSite=Strict; HttpOnly`);
  }
  return new Response(page, { headers });
};

interface DenoLike {
  serve(
    options: { port: number; hostname: string; onListen?: () => void },
    handler: typeof fetch,
  ): { addr: { port: number } };
}
interface BunLike {
  serve(options: { port: number; hostname: string; fetch: typeof fetch }): { port: number };
}
/** Serves `fetch` with the runtime's own server; resolves to the port (PORT=0 picks one). */
async function listen(): Promise<number> {
  const runtime = globalThis as { Deno?: DenoLike; Bun?: BunLike };
  if (runtime.Deno) return runtime.Deno.serve({ port, hostname, onListen() {} }, fetch).addr.port;
  if (runtime.Bun) return runtime.Bun.serve({ port, hostname, fetch }).port;
  const { serve } = await import("@hono/node-server");
  return await new Promise((resolve) =>
    serve({ fetch, port, hostname }, (info) => resolve(info.port))
  );
}
const actualPort = await listen();
console.log(`Floret chat on http://${hostname}:${actualPort}/ (API at /api), journal ${dbUrl}`);
