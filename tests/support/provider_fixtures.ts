// Loads the recorded provider replies in tests/fixtures/providers (see the
// README there) and replays them through an injected fetch. A recording that
// is missing fails the test that needs it: these tests never skip.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the recordings are, relative to this file. */
export const FIXTURES_URL = new URL("../fixtures/providers/", import.meta.url);

/**
 * Reads one file of the recordings folder, failing with a message that names
 * the folder when it is not there (a partial checkout, a renamed recording).
 */
export function readFixture(name: string): Uint8Array {
  const url = new URL(name, FIXTURES_URL);
  try {
    return new Uint8Array(readFileSync(url));
  } catch (error) {
    throw new Error(`provider recording ${name} not found in ${fileURLToPath(FIXTURES_URL)}`, {
      cause: error,
    });
  }
}

/** {@link readFixture} as UTF-8 text. */
export function readFixtureText(name: string): string {
  return new TextDecoder().decode(readFixture(name));
}

/** A recorded HTTP reply. */
export interface Recording {
  name: string;
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

// Headers that describe the transfer, not the (already decoded) body we hold.
const DROP = new Set(["content-encoding", "content-length", "transfer-encoding"]);

/** Reads one recording; `.chunks.jsonl` files are framed back into SSE. */
export function loadRecording(name: string): Recording {
  const raw = readFixture(name);
  const headersUrl = new URL(`${name}.headers.json`, FIXTURES_URL);
  let status = Number(/error-(\d{3})/.exec(name)?.[1] ?? 200);
  let headers: [string, string][] = [];
  if (existsSync(fileURLToPath(headersUrl))) {
    const recorded = JSON.parse(readFileSync(headersUrl, "utf8")) as {
      status: { code: number };
      headers: Record<string, string[]>;
    };
    status = recorded.status.code;
    for (const [key, values] of Object.entries(recorded.headers)) {
      if (DROP.has(key.toLowerCase())) continue;
      for (const value of values) headers.push([key, value]);
    }
  } else {
    const type = name.endsWith(".json") ? "application/json" : "text/event-stream";
    headers = [["content-type", type]];
  }
  let body = raw;
  if (name.endsWith(".jsonl")) {
    headers = [["content-type", "text/event-stream"]];
    body = new TextEncoder().encode(jsonlAsSse(new TextDecoder().decode(raw)));
  }
  return { name, status, headers, body };
}

/** Frames JSONL payloads as SSE `data:` events. */
export function jsonlAsSse(text: string): string {
  return text.split("\n").filter((line) => line.trim() !== "").map((line) => `data: ${line}\n\n`)
    .join("");
}

/**
 * Splits the Responses multi-turn recording (four responses back to back)
 * into one SSE body per response.
 */
export function splitResponses(name: string): Recording[] {
  const text = readFixtureText(name);
  const groups: string[][] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if ((JSON.parse(line) as { type: string }).type === "response.created") groups.push([]);
    groups.at(-1)?.push(line);
  }
  return groups.map((lines, index) => ({
    name: `${name}#${index}`,
    status: 200,
    headers: [["content-type", "text/event-stream"]],
    body: new TextEncoder().encode(jsonlAsSse(lines.join("\n"))),
  }));
}

/** What the injected fetch saw of each request. */
export interface SentRequest {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** How to replay: where to cut the body into chunks, and whether to hang at the end. */
export interface ReplayOptions {
  /** Byte offsets where chunks end (sorted or not; out-of-range ones are ignored). */
  cuts?: number[];
  /** Keep the body open after the last byte (for abort tests). */
  hang?: boolean;
  /** Replace the body bytes. */
  body?: Uint8Array;
}

/** A fetch that answers every call with the recording and records what was sent. */
export function replayFetch(
  recording: Recording,
  sent: SentRequest[] = [],
  options: ReplayOptions = {},
): typeof globalThis.fetch {
  const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
    const text = typeof init?.body === "string" ? init.body : "{}";
    sent.push({ url, headers, body: JSON.parse(text) as Record<string, unknown> });
    const body = options.body ?? recording.body;
    const chunks = cutInto(body, options.cuts ?? []);
    const signal = init?.signal;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        if (!options.hang) controller.close();
        signal?.addEventListener("abort", () => {
          try {
            controller.error(signal.reason);
          } catch {
            // Already closed.
          }
        }, { once: true });
      },
    });
    return Promise.resolve(
      new Response(stream, { status: recording.status, headers: recording.headers }),
    );
  };
  return fetch as typeof globalThis.fetch;
}

function cutInto(body: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.filter((cut) => cut > 0 && cut < body.length))].sort((a, b) =>
    a - b
  );
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const point of [...points, body.length]) {
    chunks.push(body.slice(from, point));
    from = point;
  }
  return chunks.filter((chunk) => chunk.length > 0);
}
