// Every public option a user may fill from `process.env.X` or another value
// that may be undefined accepts `undefined` under `exactOptionalPropertyTypes`
// (tsc --init's default). The repository's tsc compiles this file; the package
// step (scripts/check_package.mjs) compiles it again in a consumer project
// against the packed .d.ts with strict + exactOptionalPropertyTypes +
// skipLibCheck: false, where a field typed `?: T` without `| undefined` fails.
import { z } from "zod";
import { defineAgent, defineTool, memoryStore, openHost } from "@floret/engine";
import type { Agent, Host, ToolDefinition } from "@floret/engine";
import { scriptedGateway } from "@floret/engine/testing";
import { libsqlStore } from "@floret/engine/libsql";
import { postgresStore } from "@floret/engine/postgres";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { webFetchTool } from "@floret/engine/web-fetch";
import { braveSearch, webSearchTool } from "@floret/engine/web-search";
import { threadApi, threadClient } from "@floret/engine/http";
import type { DenoKvStoreOptions } from "@floret/engine/deno-kv";
import type { HostedTool } from "@floret/engine/anthropic";
import type { PrepareImageOptions } from "@floret/engine/images";
import type { GatewayConformanceOptions, KvConformanceOptions } from "@floret/engine/testing";

/** Builds each option shape with every optional field `undefined`. */
export async function optionsTakeUndefined(env: Record<string, string | undefined>): Promise<Host> {
  const maybe = env.MAYBE;
  const maybeNumber = maybe === undefined ? undefined : Number(maybe);
  const maybeFlag = maybe === undefined ? undefined : maybe === "1";
  const tool: ToolDefinition<{ a: number }> = defineTool({
    name: "t",
    description: "d",
    input: z.object({ a: z.number() }),
    effect: undefined,
    permission: undefined,
    execute: ({ a }) => String(a),
  });
  const agent: Agent = defineAgent({
    id: "a",
    systemPrompt: "p",
    gateway: scriptedGateway([]),
    name: maybe,
    tools: [tool],
    context: {
      windowTokens: maybeNumber,
      maxOutputTokens: maybeNumber,
      modelMaxOutputTokens: maybeNumber,
      tokenCounter: undefined,
    },
    maxSteps: maybeNumber,
    providerRetry: {
      disabled: maybeFlag,
      delaysMs: undefined,
      maxTimeoutRetries: maybeNumber,
      windowMs: maybeNumber,
    },
    timeouts: {
      firstOutputMs: maybeNumber,
      betweenOutputsMs: maybeNumber,
      attemptMs: maybeNumber,
    },
    askUser: maybeFlag,
    subagents: undefined,
    parentEvents: maybeFlag,
    subagentLimits: { maxDepth: maybeNumber, maxLiveChildren: maybeNumber },
    todos: maybeFlag,
    titles: undefined,
    reasoning: undefined,
    maxRequestBytes: maybeNumber,
    goals: maybeFlag,
  });
  const gateways = [
    openAIChat({
      model: "m",
      apiKey: env.OPENAI_API_KEY,
      baseURL: maybe,
      fetch: undefined,
      capabilities: undefined,
      stateKey: maybe,
      headers: undefined,
      extraBody: undefined,
      promptCache: maybeFlag,
      provider: maybe,
    }),
    openAIResponses({ model: "m", apiKey: env.OPENAI_API_KEY, hostedTools: undefined }),
    anthropicMessages({ model: "m", apiKey: env.ANTHROPIC_API_KEY, maxTokens: maybeNumber }),
  ];
  const stores = [
    libsqlStore({
      url: "file:probe.db",
      authToken: env.LIBSQL_AUTH_TOKEN,
      synchronous: undefined,
      busyTimeoutMs: maybeNumber,
    }),
    postgresStore({ url: "postgres://127.0.0.1/x", maxConnections: maybeNumber }),
  ];
  const tools = [
    webFetchTool({
      timeoutMs: maybeNumber,
      maxBytes: maybeNumber,
      maxRedirects: maybeNumber,
      resolve: undefined,
      fetch: undefined,
    }),
    webSearchTool({
      backend: braveSearch({
        apiKey: env.BRAVE_API_KEY,
        resolveApiKey: undefined,
        fetch: undefined,
      }),
      count: maybeNumber,
      timeoutMs: maybeNumber,
    }),
  ];
  const host = await openHost({
    store: memoryStore(),
    onEvent: undefined,
    hostId: maybe,
    leaseTtlMs: maybeNumber,
    deferExecution: maybeFlag,
    onStartup: undefined,
    ids: undefined,
    clock: undefined,
    storeTimeoutMs: maybeNumber,
  });
  const app = threadApi(host.threads({ agent }), {
    authorize: () => true,
    basePath: maybe,
    pingIntervalMs: maybeNumber,
    turnControl: maybeFlag,
    chat: { cancelOnDisconnect: maybeFlag },
  });
  const client = threadClient({
    baseUrl: "http://127.0.0.1",
    fetch: undefined,
    headers: undefined,
  });
  // Shapes whose functions this file does not call (they need Deno KV, image
  // bytes or a test runner): `satisfies` checks them all the same.
  const shapes = [
    { closeKv: maybeFlag } satisfies DenoKvStoreOptions,
    { type: "web_search", maxUses: maybeNumber } satisfies HostedTool,
    {
      maxLongestSide: maybeNumber,
      quality: maybeNumber,
      maxSourceBytes: maybeNumber,
      maxPixels: maybeNumber,
    } satisfies PrepareImageOptions,
    {
      reopen: undefined,
      largeValueBytes: maybeNumber,
      modelRuns: maybeNumber,
      timeoutMs: maybeNumber,
    } satisfies KvConformanceOptions,
    {
      scenarios: undefined,
      request: undefined,
      abortGraceMs: maybeNumber,
    } satisfies GatewayConformanceOptions,
  ];
  void [gateways, stores, tools, app, client, shapes];
  return host;
}
