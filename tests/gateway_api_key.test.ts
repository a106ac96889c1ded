/**
 * Gateways without an API key fail at construction with `invalid_input`
 * naming the environment variable; the variable is read when no key is
 * given; `apiKey: string | undefined` is accepted (exactOptionalPropertyTypes).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { isFloretError } from "@floret/engine";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";

function withEnv(name: string, value: string | undefined, run: () => void): void {
  const before = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    run();
  } finally {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
}

const names = (variable: string) => (error: unknown): boolean =>
  isFloretError(error) && error.code === "invalid_input" && error.message.includes(variable);

test("no key given and none in the environment: invalid_input naming the variable", () => {
  const maybeKey: string | undefined = undefined;
  withEnv("OPENAI_API_KEY", undefined, () => {
    assert.throws(
      () => openAIChat({ model: "gpt-4.1-mini", apiKey: maybeKey }),
      names("OPENAI_API_KEY"),
    );
    assert.throws(() => openAIResponses({ model: "gpt-5-mini" }), names("OPENAI_API_KEY"));
    assert.throws(() => openAIChat({ model: "m", apiKey: "" }), names("OPENAI_API_KEY"));
  });
  withEnv("ANTHROPIC_API_KEY", undefined, () => {
    assert.throws(
      () => anthropicMessages({ model: "claude-sonnet-4-5", apiKey: maybeKey }),
      names("ANTHROPIC_API_KEY"),
    );
  });
});

test("the environment variable or a given key is enough", async () => {
  withEnv("OPENAI_API_KEY", "sk-from-env", () => {
    assert.equal(openAIChat({ model: "m" }).info.model, "m");
    assert.equal(openAIResponses({ model: "m" }).info.model, "m");
  });
  withEnv("ANTHROPIC_API_KEY", "sk-ant-from-env", () => {
    assert.equal(anthropicMessages({ model: "m" }).info.provider, "anthropic");
  });
  withEnv("OPENAI_API_KEY", undefined, () => {
    assert.equal(openAIChat({ model: "m", apiKey: "none" }).info.provider, "openai");
  });
  // The key read from the environment is the one sent.
  let auth: string | null = null;
  const fetch: typeof globalThis.fetch = (input, init) => {
    auth = new Headers(init?.headers ?? (input as Request).headers).get("authorization");
    return Promise.resolve(new Response("{}", { status: 401 }));
  };
  let gateway!: ReturnType<typeof openAIChat>;
  withEnv("OPENAI_API_KEY", "sk-from-env", () => {
    gateway = openAIChat({ model: "m", fetch, baseURL: "http://127.0.0.1:9/v1" });
  });
  const stream = gateway.stream(
    { messages: [{ role: "user", text: "hi" }], tools: [], systemPrompt: "s" } as never,
    { signal: new AbortController().signal },
  );
  await assert.rejects(async () => {
    for await (const _ of stream) { /* drain */ }
  });
  assert.equal(auth, "Bearer sk-from-env");
});
