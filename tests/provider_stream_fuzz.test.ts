// Property tests of stream parsing over every recording: any chunking gives the
// same events; truncation and corruption give a typed ProviderError or a
// well-formed stream, never a crash, a hang or an unhandled rejection.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { ProviderError } from "@floret/engine";
import type { ProviderEvent } from "@floret/engine";
import type { Recording, ReplayOptions } from "./support/provider_fixtures.ts";
import {
  gatewayForRecording,
  loadStreamRecordings,
  REPLAY_KEY,
} from "./support/recording_gateways.ts";
import { runGateway, violation } from "./support/gateway_run.ts";
import type { RunResult } from "./support/gateway_run.ts";

const RUNS = 25;
const HANG_GUARD_MS = 5000;

async function replay(recording: Recording, options: ReplayOptions = {}): Promise<RunResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<RunResult>((resolve) => {
    timer = setTimeout(() => resolve({ events: [], error: new Error("HUNG") }), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([runGateway(gatewayForRecording(recording, options)), hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** A comparable view of an outcome: events plus the error's kind and message. */
function outcome(result: RunResult): unknown {
  const error = result.error instanceof ProviderError
    ? { kind: result.error.kind, message: result.error.message }
    : result.error;
  return { events: result.events, error };
}

function withoutUsage(events: ProviderEvent[]): ProviderEvent[] {
  return events.filter((event) => event.type !== "usage");
}

/** Truncated or corrupted input must end typed and well-formed. */
function assertSafe(result: RunResult, reference: RunResult, compare: boolean): void {
  if (result.error !== undefined) {
    assert.ok(result.error instanceof ProviderError, `untyped failure: ${String(result.error)}`);
    assert.equal(result.error.message.includes(REPLAY_KEY), false);
    return;
  }
  assert.equal(violation(result.events), undefined);
  // A cut after the last meaningful event may still succeed; it must then agree with the whole.
  if (compare && reference.error === undefined) {
    assert.deepEqual(withoutUsage(result.events), withoutUsage(reference.events));
  }
}

describe("stream parsing properties", () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => {
    rejections.push(reason);
  };
  before(() => {
    process.on("unhandledRejection", onRejection);
  });
  after(() => {
    process.off("unhandledRejection", onRejection);
    assert.deepEqual(rejections, [], "unhandled rejections during the properties");
  });

  const recordings = loadStreamRecordings();
  for (const recording of recordings) {
    const size = recording.body.length;
    test(`${recording.name}: any chunking gives the same events`, async () => {
      const reference = await replay(recording);
      if (!recording.name.startsWith("openrouter")) assert.equal(reference.error, undefined);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: size - 1 }), { maxLength: 40 }),
          async (cuts) => {
            assert.deepEqual(outcome(await replay(recording, { cuts })), outcome(reference));
          },
        ),
        { numRuns: RUNS },
      );
      // Cuts inside every multi-byte UTF-8 character at once.
      const inside = [...recording.body.keys()].filter((index) =>
        (recording.body[index] & 0xc0) === 0x80
      );
      if (inside.length > 0) {
        assert.deepEqual(outcome(await replay(recording, { cuts: inside })), outcome(reference));
      }
    });

    test(`${recording.name}: truncation ends typed, never hangs`, async () => {
      const reference = await replay(recording);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: size - 1 }), async (length) => {
          const result = await replay(recording, { body: recording.body.slice(0, length) });
          assertSafe(result, reference, true);
        }),
        { numRuns: RUNS },
      );
    });

    test(`${recording.name}: corruption ends typed, never crashes`, async () => {
      const reference = await replay(recording);
      const mutation = fc.oneof(
        fc.record({ at: fc.nat({ max: size - 1 }), byte: fc.integer({ min: 0, max: 255 }) }).map(
          ({ at, byte }) => {
            const body = recording.body.slice();
            body[at] = byte;
            return body;
          },
        ),
        fc.record({ at: fc.nat({ max: size }), junk: fc.string({ maxLength: 40 }) }).map((
          { at, junk },
        ) =>
          concat(
            recording.body.slice(0, at),
            new TextEncoder().encode(`\n${junk}\n`),
            recording.body.slice(at),
          )
        ),
        fc.record({ at: fc.nat({ max: size - 1 }), length: fc.integer({ min: 1, max: 200 }) }).map((
          { at, length },
        ) => concat(recording.body.slice(0, at), recording.body.slice(at + length))),
      );
      await fc.assert(
        fc.asyncProperty(mutation, async (body) => {
          assertSafe(await replay(recording, { body }), reference, false);
        }),
        { numRuns: RUNS },
      );
    });
  }
});

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
