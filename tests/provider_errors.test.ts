// Error classification, diagnostics, secrecy, truncation and abort, for all three gateways.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "@floret/engine";
import type { Gateway } from "@floret/engine";
import { openAIChat, openAIResponses } from "@floret/engine/openai";
import { anthropicMessages } from "@floret/engine/anthropic";
import { loadRecording, readFixtureText, replayFetch } from "./support/provider_fixtures.ts";
import type { Recording } from "./support/provider_fixtures.ts";
import { runGateway } from "./support/gateway_run.ts";

const KEY = "sk-floret-SECRET-key-0123456789";

type Kind = "chat" | "responses" | "anthropic";

function gatewayFor(kind: Kind, fetch: typeof globalThis.fetch): Gateway {
  if (kind === "chat") return openAIChat({ model: "gpt-4o", apiKey: KEY, fetch });
  if (kind === "responses") return openAIResponses({ model: "gpt-4o", apiKey: KEY, fetch });
  return anthropicMessages({ model: "claude-sonnet-5-5", apiKey: KEY, fetch });
}

async function failWith(kind: Kind, recording: Recording): Promise<ProviderError> {
  const result = await runGateway(gatewayFor(kind, replayFetch(recording)));
  assert.ok(
    result.error instanceof ProviderError,
    `expected a ProviderError, got ${String(result.error)}`,
  );
  assertNoKey(result.error);
  assert.equal(JSON.stringify(result.events).includes(KEY), false);
  return result.error;
}

function assertNoKey(error: ProviderError): void {
  const views = [
    error.message,
    error.body ?? "",
    error.stack ?? "",
    JSON.stringify(error),
    String(error.cause),
  ];
  for (const view of views) assert.equal(view.includes(KEY), false, `API key leaked: ${view}`);
}

function raw(name: string): string {
  return readFixtureText(name);
}

/** A recording with extra headers or another body; only used where the tests say "synthetic". */
function variant(recording: Recording, headers: [string, string][], body?: string): Recording {
  return {
    ...recording,
    headers: [...recording.headers, ...headers],
    body: body === undefined ? recording.body : new TextEncoder().encode(body),
  };
}

describe("provider errors from recordings", () => {
  test("OpenAI 429: retryable rate limit with request id and the exact body", async () => {
    const error = await failWith("chat", loadRecording("openai-error-429-rate-limit.json"));
    assert.equal(error.status, 429);
    assert.equal(error.retry, "retryable");
    assert.equal(error.kind, "rate_limit");
    assert.equal(error.providerCode, "rate_limit_exceeded");
    assert.equal(error.requestId, "df4093761753468e57c467fd3774f9ad");
    assert.equal(error.retryAfterMs, undefined);
    assert.equal(error.body, raw("openai-error-429-rate-limit.json"));
  });

  test("OpenAI 429 wait hints: retry-after-ms, retry-after, and the message (synthetic headers)", async () => {
    const recording = loadRecording("openai-error-429-rate-limit.json");
    assert.equal(
      (await failWith("chat", variant(recording, [["retry-after-ms", "1500"]]))).retryAfterMs,
      1500,
    );
    assert.equal(
      (await failWith("chat", variant(recording, [["retry-after", "3"]]))).retryAfterMs,
      3000,
    );
    // The 2026 wording is recorded as message text only; wrap it in the usual error body.
    const message = raw("openai-error-429-rate-limit-message-2026.txt").trim().replace(/^429 /, "");
    const body = JSON.stringify({
      error: { message, type: "tokens", param: null, code: "rate_limit_exceeded" },
    });
    const error = await failWith("chat", variant(recording, [], body));
    assert.equal(error.retryAfterMs, 174);
    assert.equal(error.retry, "retryable");
  });

  test("OpenAI 401 on chat and responses: never, auth, masked key redacted", async () => {
    for (
      const [kind, name] of [
        ["chat", "openai-error-401-invalid-api-key.json"],
        ["responses", "openai-responses-error-401-invalid-api-key.json"],
      ] as const
    ) {
      const error = await failWith(kind, loadRecording(name));
      assert.equal(error.status, 401);
      assert.equal(error.retry, "never");
      assert.equal(error.kind, "auth");
      assert.equal(error.providerCode, "invalid_api_key");
      assert.equal(error.body, raw(name).replace("invalid-*****2345", "[redacted]"));
      assert.equal(error.message.includes("*****"), false);
    }
  });

  test("OpenAI 400 context_length_exceeded: never, context_overflow", async () => {
    const error = await failWith(
      "chat",
      loadRecording("openai-error-400-context-length-exceeded.json"),
    );
    assert.equal(error.status, 400);
    assert.equal(error.retry, "never");
    assert.equal(error.kind, "context_overflow");
    assert.equal(error.providerCode, "context_length_exceeded");
  });

  test("Anthropic 400 prompt too long: never, context_overflow, request id from the body", async () => {
    const error = await failWith(
      "anthropic",
      loadRecording("anthropic-error-400-prompt-too-long.json"),
    );
    assert.equal(error.status, 400);
    assert.equal(error.retry, "never");
    assert.equal(error.kind, "context_overflow");
    assert.equal(error.providerCode, "invalid_request_error");
    assert.equal(error.requestId, "req_011CVjxiYzEFcAQC4Fk87zw2");
    assert.equal(error.body, raw("anthropic-error-400-prompt-too-long.json"));
  });

  test("Anthropic 401: never, auth, request id from the header", async () => {
    const error = await failWith(
      "anthropic",
      loadRecording("anthropic-error-401-invalid-api-key.json"),
    );
    assert.equal(error.status, 401);
    assert.equal(error.retry, "never");
    assert.equal(error.kind, "auth");
    assert.equal(error.providerCode, "authentication_error");
    assert.equal(error.requestId, "req_011CWdMEehrhsdujMyQ9pChP");
  });

  test("Anthropic 529 overloaded: retryable; retry-after honoured (synthetic header)", async () => {
    const recording = loadRecording("anthropic-error-529-overloaded.json");
    const error = await failWith("anthropic", recording);
    assert.equal(error.status, 529);
    assert.equal(error.retry, "retryable");
    assert.equal(error.kind, "overloaded");
    assert.equal(error.requestId, "req_011CX7J5ZXp3npD8nY7VYZvm");
    assert.equal(
      (await failWith("anthropic", variant(recording, [["retry-after", "7"]]))).retryAfterMs,
      7000,
    );
  });

  test("a key echoed back by a provider is redacted (synthetic body)", async () => {
    const recording = loadRecording("openai-error-401-invalid-api-key.json");
    const body = JSON.stringify({
      error: { message: `Bad key ${KEY}`, type: "invalid_request_error", code: "x" },
    });
    const error = await failWith("chat", variant(recording, [], body));
    assert.match(error.message, /Bad key \[redacted\]/);
  });
});

describe("in-stream errors (synthetic frames: no recording of these exists)", () => {
  test("Anthropic event: error overloaded mid-stream is retryable", async () => {
    const recording = loadRecording("anthropic-stream-parallel-tool-use.sse");
    const text = new TextDecoder().decode(recording.body);
    const cut = text.indexOf("event: content_block_stop");
    const frame =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const result = await runGateway(
      gatewayFor("anthropic", replayFetch(variant(recording, [], text.slice(0, cut) + frame))),
    );
    assert.ok(result.error instanceof ProviderError);
    assert.equal(result.error.status, undefined);
    assert.equal(result.error.retry, "retryable");
    assert.equal(result.error.kind, "overloaded");
    assert.ok(result.events.some((event) => event.type === "text"));
  });

  test("Responses response.failed with a server error is retryable; an invalid prompt is not", async () => {
    const recording = loadRecording("openai-responses-stream-text.sse");
    const text = new TextDecoder().decode(recording.body);
    const cut = text.indexOf("event: response.completed");
    for (
      const [code, retry] of [["server_error", "retryable"], ["invalid_prompt", "never"]] as const
    ) {
      const failed = {
        type: "response.failed",
        response: { status: "failed", error: { code, message: "Boom" } },
      };
      const frame = `event: response.failed\ndata: ${JSON.stringify(failed)}\n\n`;
      const result = await runGateway(
        gatewayFor("responses", replayFetch(variant(recording, [], text.slice(0, cut) + frame))),
      );
      assert.ok(result.error instanceof ProviderError);
      assert.equal(result.error.retry, retry);
      assert.equal(result.error.providerCode, code);
    }
  });
});

test("a request that cannot be built fails as never-retryable, without calling fetch", async () => {
  let calls = 0;
  const fetch = (() => {
    calls++;
    return Promise.reject(new Error("must not be called"));
  }) as typeof globalThis.fetch;
  // A header value with a line break cannot be sent by any runtime.
  const headers = { "x-broken": "line\nbreak" };
  for (
    const gateway of [
      openAIChat({ model: "gpt-4o", apiKey: KEY, headers, fetch }),
      openAIResponses({ model: "gpt-4o", apiKey: KEY, headers, fetch }),
      anthropicMessages({ model: "claude-sonnet-5-5", apiKey: KEY, headers, fetch }),
    ]
  ) {
    const result = await runGateway(gateway);
    assert.ok(result.error instanceof ProviderError, String(result.error));
    assert.equal(result.error.retry, "never");
    assertNoKey(result.error);
  }
  assert.equal(calls, 0);
});

describe("transport failures", () => {
  const kinds: Kind[] = ["chat", "responses", "anthropic"];
  for (const kind of kinds) {
    test(`${kind}: connection failure is retryable, timeout is timeout`, async () => {
      const refused = (() =>
        Promise.reject(new TypeError("fetch failed"))) as typeof globalThis.fetch;
      const failed = await runGateway(gatewayFor(kind, refused));
      assert.ok(failed.error instanceof ProviderError);
      assert.equal(failed.error.retry, "retryable");
      assertNoKey(failed.error);
      const slow = (() =>
        Promise.reject(
          new DOMException("The operation timed out.", "TimeoutError"),
        )) as typeof globalThis.fetch;
      const timedOut = await runGateway(gatewayFor(kind, slow));
      assert.ok(timedOut.error instanceof ProviderError);
      assert.equal(timedOut.error.retry, "timeout");
    });
  }
});

const streams: Record<Kind, string> = {
  chat: "openai-chat-stream-parallel-tool-calls.sse",
  responses: "openai-responses-stream-parallel-function-calls.sse",
  anthropic: "anthropic-stream-parallel-tool-use.sse",
};

/** The request ids those recordings' headers carry. */
const streamRequestIds: Record<Kind, string> = {
  chat: "req_25b4f702f18f4761bc2f85329fc62817",
  responses: "req_8d6d8f1c29d6405e959403d5f0e2384c",
  anthropic: "req_011CWF2TpdUb3CxBYz61BPNn",
};

describe("broken streams and aborts", () => {
  for (const [kind, name] of Object.entries(streams) as [Kind, string][]) {
    test(`${kind}: missing terminal event, cut mid-event and garbage end in stream_interrupted`, async () => {
      const recording = loadRecording(name);
      const text = new TextDecoder().decode(recording.body);
      const terminal = kind === "chat"
        ? text.indexOf('"finish_reason":"tool_calls"')
        : kind === "responses"
        ? text.indexOf("event: response.completed")
        : text.indexOf("event: message_stop");
      const bodies = [
        text.slice(0, text.lastIndexOf("\n\n", terminal) + 2),
        text.slice(0, terminal + 10),
        // Anthropic's SDK skips unnamed events (the API never sends them), so the garbage gets a name.
        text.slice(0, terminal) + (kind === "anthropic" ? "event: content_block_delta\n" : "") +
        "data: {this is not json\n\n" + text.slice(terminal),
      ];
      for (const body of bodies) {
        const result = await runGateway(
          gatewayFor(kind, replayFetch(variant(recording, [], body))),
        );
        assert.ok(
          result.error instanceof ProviderError,
          `${String(result.error)} for ${JSON.stringify(body.slice(-80))}`,
        );
        assert.equal(result.error.kind, "stream_interrupted");
        assert.equal(result.error.retry, "retryable");
        assert.equal(result.error.requestId, streamRequestIds[kind]);
        assert.ok(!result.events.some((event) => event.type === "finish"));
      }
    });

    test(`${kind}: aborting mid-stream throws the abort reason promptly`, async () => {
      const recording = loadRecording(name);
      const half = recording.body.slice(0, Math.floor(recording.body.length / 2));
      const gateway = gatewayFor(kind, replayFetch(recording, [], { body: half, hang: true }));
      const controller = new AbortController();
      const reason = new Error("stop now");
      const events: unknown[] = [];
      const outcome = (async () => {
        for await (
          const event of gateway.stream(
            { messages: [{ role: "user", text: "hi" }], tools: [], fingerprint: "f" },
            { signal: controller.signal },
          )
        ) {
          events.push(event);
          if (events.length === 1) controller.abort(reason);
        }
      })();
      await assert.rejects(outcome, (error) => error === reason);
      assert.equal(events.length, 1);
    });

    test(`${kind}: aborting while a fetch that ignores its signal waits for headers`, async () => {
      const never = (() => new Promise<Response>(() => {})) as typeof globalThis.fetch;
      const controller = new AbortController();
      const reason = new Error("gave up");
      const pending = runGateway(gatewayFor(kind, never), undefined, controller.signal);
      setTimeout(() => controller.abort(reason), 5);
      assert.equal((await pending).error, reason);
    });

    test(`${kind}: an already aborted signal throws before any request`, async () => {
      let calls = 0;
      const fetch = ((...args: Parameters<typeof globalThis.fetch>) => {
        calls++;
        return replayFetch(loadRecording(name))(...args);
      }) as typeof globalThis.fetch;
      const controller = new AbortController();
      const reason = new Error("too late");
      controller.abort(reason);
      const result = await runGateway(gatewayFor(kind, fetch), undefined, controller.signal);
      assert.equal(result.error, reason);
      assert.equal(calls, 0);
    });
  }
});
