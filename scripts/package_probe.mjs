// Runs inside a scratch project that installed the packed tarball, under
// plain Node (no loader), Bun and Deno. check_package.mjs copies it there with
// a probe.json: { mode: "bare" | "full", entries: [{ specifier, peers }] }.
// "bare" has no optional peer installed; "full" has all of them.
// Prints one line per check and exits non-zero if any failed.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { mode, entries } = JSON.parse(readFileSync("probe.json", "utf8"));
const scratch = mkdtempSync(join(tmpdir(), "floret-probe-"));
let failures = 0;

async function check(name, body) {
  try {
    const note = await body();
    console.log(`ok   ${name}${note ? ` (${note})` : ""}`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

/** Awaits `body` and requires it to reject with a message matching `pattern`. */
async function rejects(body, pattern) {
  try {
    await body();
  } catch (error) {
    const message = String(error?.message ?? error);
    if (pattern.test(message)) return message.slice(0, 120);
    throw new Error(`wrong error: ${message}`);
  }
  throw new Error(`no error; expected ${pattern}`);
}

async function drain(iterable) {
  for await (const _ of iterable) { /* the events do not matter here */ }
}

const request = { messages: [{ role: "user", text: "Hello" }], tools: [], fingerprint: "probe" };
const signal = new AbortController().signal;
// A 1×1 PNG.
const png = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

for (const entry of entries) {
  await check(`import ${entry.specifier}`, async () => {
    try {
      await import(entry.specifier);
    } catch (error) {
      // Without its peers an entry may fail at import (a static import), provided
      // the error names a missing package itself (quoted by the resolver, or in
      // our install advice), not merely a file path that contains the name.
      const message = String(error?.message ?? error);
      const names = (peer) =>
        [`'${peer}'`, `"${peer}"`, `npm install ${peer}`].some((form) => message.includes(form));
      if (mode === "bare" && entry.peers.some(names)) {
        return `fails naming ${entry.peers.filter(names).join(", ")}`;
      }
      throw error;
    }
  });
}

await check("a scripted turn on memoryStore", async () => {
  const { defineAgent, memoryStore, openHost } = await import("@floret/engine");
  const { scriptedGateway } = await import("@floret/engine/testing");
  const host = await openHost({ store: memoryStore() });
  try {
    const gateway = scriptedGateway([{ text: "hi there" }]);
    const threads = host.threads({
      agent: defineAgent({ id: "probe", systemPrompt: "p", gateway }),
    });
    const { threadId } = await threads.create({ requestKey: "t" });
    await threads.send({ threadId, requestKey: "m", input: { text: "hello" } });
    const view = await threads.waitForIdle(threadId);
    const kinds = view.items.map((item) => item.kind).join(",");
    if (kinds !== "user,assistant") throw new Error(`unexpected items: ${kinds}`);
  } finally {
    await host.shutdown();
  }
});

const has = (specifier) => entries.some((e) => e.specifier === specifier);

if (mode === "bare") {
  // Each adapter names its missing package, and how to install it, at first use.
  if (has("@floret/engine/libsql")) {
    await check("libsqlStore without @libsql/client", async () => {
      const { libsqlStore } = await import("@floret/engine/libsql");
      const store = libsqlStore({ url: `file:${join(scratch, "probe.db")}` });
      return await rejects(() => store.getMany([["k"]]), /npm install @libsql\/client/);
    });
  }
  if (has("@floret/engine/openai")) {
    await check("openAIChat without openai", async () => {
      const { openAIChat } = await import("@floret/engine/openai");
      const gateway = openAIChat({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
      return await rejects(() => drain(gateway.stream(request, { signal })), /npm install openai/);
    });
  }
  if (has("@floret/engine/anthropic")) {
    await check("anthropicMessages without @anthropic-ai/sdk", async () => {
      const { anthropicMessages } = await import("@floret/engine/anthropic");
      const gateway = anthropicMessages({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9" });
      return await rejects(
        () => drain(gateway.stream(request, { signal })),
        /npm install @anthropic-ai\/sdk/,
      );
    });
  }
  if (has("@floret/engine/tokens")) {
    await check("estimateTokens without gpt-tokenizer", async () => {
      const { estimateTokens } = await import("@floret/engine/tokens");
      return await rejects(() => estimateTokens(request, "gpt-4o"), /npm install gpt-tokenizer/);
    });
  }
  if (has("@floret/engine/images")) {
    await check("prepareModelImage without imagescript", async () => {
      const { prepareModelImage } = await import("@floret/engine/images");
      return await rejects(() => prepareModelImage(png), /npm install imagescript/);
    });
  }
} else {
  if (has("@floret/engine/libsql")) {
    await check("libsqlStore on a file", async () => {
      const { libsqlStore } = await import("@floret/engine/libsql");
      const store = libsqlStore({ url: `file:${join(scratch, "probe.db")}` });
      try {
        const result = await store.commit({ set: [{ key: ["k"], value: new Uint8Array([7]) }] });
        const [entry] = await store.getMany([["k"]]);
        if (!result.ok || entry?.value[0] !== 7) throw new Error("round trip failed");
      } finally {
        await store.close();
      }
    });
  }
  if (has("@floret/engine/openai")) {
    await check("openAIChat loads the SDK (connection refused on 127.0.0.1:9)", async () => {
      const { openAIChat } = await import("@floret/engine/openai");
      const gateway = openAIChat({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
      return await rejects(() => drain(gateway.stream(request, { signal })), /connect|connection/i);
    });
  }
  if (has("@floret/engine/anthropic")) {
    await check("anthropicMessages loads the SDK (connection refused on 127.0.0.1:9)", async () => {
      const { anthropicMessages } = await import("@floret/engine/anthropic");
      const gateway = anthropicMessages({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9" });
      return await rejects(() => drain(gateway.stream(request, { signal })), /connect|connection/i);
    });
  }
  if (has("@floret/engine/tokens")) {
    await check("estimateTokens with gpt-tokenizer", async () => {
      const { estimateTokens } = await import("@floret/engine/tokens");
      const { tokenizer } = await estimateTokens(request, "gpt-4o");
      if (tokenizer !== "o200k_base") throw new Error(`tokenizer ${tokenizer}`);
    });
  }
  if (has("@floret/engine/images")) {
    await check("prepareModelImage with imagescript", async () => {
      const { prepareModelImage } = await import("@floret/engine/images");
      const image = await prepareModelImage(png);
      return `${image.mediaType}, ${image.model.width}×${image.model.height}`;
    });
  }
}

rmSync(scratch, { recursive: true, force: true });
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
// Deno and Bun keep a process alive while a libSQL or SDK handle lingers: exit explicitly.
globalThis.process?.exit(failures ? 1 : 0);
