// Type-checked by check_package.mjs against the packed .d.ts files (in a
// scratch npm project) and the .ts sources (in a scratch Deno project), and by
// the repository's tsc run. It fails if an entry's declarations are missing
// or collapse to `any`: each @ts-expect-error needs a real type to fire.
import {
  applyUpdate,
  consoleObserver,
  DEFAULT_MAX_STEPS,
  defineAgent,
  FloretError,
  memoryStore,
  openHost,
} from "@floret/engine";
import type { Gateway, KvStore, ThreadView } from "@floret/engine";
import { kvConformance, scriptedGateway } from "@floret/engine/testing";
import { encodeKey, optionalPeer } from "@floret/engine/spi";
import { libsqlStore } from "@floret/engine/libsql";
import { denoKvStore } from "@floret/engine/deno-kv";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { estimateTokens, roughTokenCount } from "@floret/engine/tokens";
import { prepareModelImage, toImageAttachment } from "@floret/engine/images";
import { webFetchTool } from "@floret/engine/web-fetch";
import { threadApi, threadClient } from "@floret/engine/http";

async function threads0(): Promise<ThreadView> {
  const host = await openHost({ store: memoryStore() });
  return host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "p", gateway: scriptedGateway([]) }),
  }).view("none");
}

export async function typed(): Promise<ThreadView> {
  const steps: number = DEFAULT_MAX_STEPS;
  const store: KvStore = libsqlStore({ url: "file:probe.db" });
  const gateways: Gateway[] = [
    scriptedGateway([{ text: "hi" }]),
    openAIChat({ model: "m" }),
    openAIResponses({ model: "m" }),
    anthropicMessages({ model: "m" }),
  ];
  // Under exactOptionalPropertyTypes, options take `T | undefined` (e.g. an environment variable).
  const maybe: string | undefined = steps > 0 ? undefined : "key";
  gateways.push(openAIChat({ model: "m", apiKey: maybe, baseURL: maybe }));
  libsqlStore({ url: "file:probe.db", authToken: maybe });
  // The unions narrow: a tool item's `tool` and a question's `questions` are set.
  const narrowed = (view: ThreadView): string[] =>
    view.items.map((item) => item.kind === "tool" ? item.tool.name : "")
      .concat(view.pending.flatMap((p) => p.kind === "input" ? p.questions.map((q) => q.id) : []));
  const same: ThreadView = applyUpdate(await threads0(), {
    type: "batch",
    baseVersion: 0,
    version: 0,
    ops: [],
  });
  void narrowed(same);
  void consoleObserver({ types: ["turn.ended"] });
  const host = await openHost({ store: memoryStore() });
  const threads = host.threads({
    agent: defineAgent({ id: "a", systemPrompt: "p", gateway: gateways[0], maxSteps: steps }),
  });
  // @ts-expect-error requestKey is required
  await threads.create({});
  // @ts-expect-error the url must be a string
  libsqlStore({ url: 1 });
  // @ts-expect-error the first argument is bytes
  await prepareModelImage("not bytes");
  // @ts-expect-error key parts are strings, numbers, bigints, booleans or bytes
  encodeKey([{}]);
  const key: Uint8Array = encodeKey(["a", 1]);
  const load: () => Promise<{ x: number }> = optionalPeer({
    package: "x",
    entry: "probe",
    load: () => Promise.resolve({ x: 1 }),
  });
  const kvStores: ((kv: unknown) => KvStore)[] = [denoKvStore];
  // @ts-expect-error timeoutMs is a number
  webFetchTool({ timeoutMs: "1" });
  const toolName: string = webFetchTool({ timeoutMs: 1_000 }).name;
  const count: number = roughTokenCount("hello");
  const { tokens } = await estimateTokens({ messages: [], tools: [] }, "m");
  const image = toImageAttachment(await prepareModelImage(new Uint8Array(count + tokens)));
  const error: FloretError = new FloretError("invalid_input", "x");
  const register: (name: string, open: () => KvStore) => void = kvConformance;
  void [store, image, error, register, key, load, kvStores, toolName, threadApi, threadClient];
  return await threads.view("thread");
}
