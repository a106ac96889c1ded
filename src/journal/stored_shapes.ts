/**
 * The shapes of stored values, checked when they are read. A store returns
 * whatever bytes it holds; a value that is JSON of the wrong shape (written
 * by a broken adapter, a hand edit, a disk fault) must fail as
 * `storage_failure` at the read, not as a `TypeError` deep inside a
 * projection. The schemas are loose: fields a later version adds pass through.
 *
 * @module
 */
import { z } from "zod";

const str = z.string();
const num = z.number();
const outcome = z.enum(["completed", "failed", "cancelled", "interrupted"]);
const input = z.looseObject({
  text: str,
  attachments: z.array(z.unknown()).optional(),
  references: z.array(z.looseObject({ kind: str, threadId: str, itemId: str.optional() }))
    .optional(),
  context: z.array(z.looseObject({ label: str, text: str })).optional(),
});
/** Run labels (`send({ labels })`): string pairs. */
const labels = z.record(z.string(), str).optional();
const question = z.looseObject({
  id: str,
  prompt: str,
  options: z.array(z.union([str, z.looseObject({ value: str, description: str.optional() })]))
    .optional(),
  secret: z.boolean().optional(),
  header: str.optional(),
  placeholder: str.optional(),
  reason: str.optional(),
  exhaustive: z.boolean().optional(),
});
const supplemental = z.array(z.looseObject({ title: str, text: str })).optional();

const queued = z.looseObject({
  id: str,
  requestKey: str,
  input,
  supplementalContext: supplemental,
  queuedAt: str,
  labels,
});
const activity = z.looseObject({
  label: str.optional(),
  rows: z.array(z.looseObject({
    kind: z.enum(["text", "markdown", "code"]),
    text: str,
    language: str.optional(),
    truncated: z.literal(true).optional(),
  })).optional(),
  omittedRows: num.optional(),
  web: z.looseObject({
    operation: str,
    query: str.optional(),
    url: str.optional(),
    results: z.array(z.looseObject({ url: str })).optional(),
  }).optional(),
});

/** The schema marker. */
export const schemaMarkerShape: z.ZodType = z.looseObject({ version: z.number().int() });

/** A thread record. */
export const threadRecordShape: z.ZodType = z.looseObject({
  id: str,
  title: str.optional(),
  createdAt: str,
  updatedAt: str,
  parentThreadId: str.optional(),
  agentId: str.optional(),
  base: z.looseObject({ threadId: str, seq: num }).optional(),
  forkedFrom: z.looseObject({ threadId: str, itemId: str.optional() }).optional(),
  seq: num,
  status: z.enum(["idle", "running", "waiting"]),
  active: z.looseObject({
    turnId: str,
    runId: str,
    owner: str.optional(),
    leaseUntil: num.optional(),
  }).optional(),
  waiting: z.looseObject({ turnId: str, runId: str }).optional(),
  queue: z.array(queued),
  lastTurn: z.looseObject({ turnId: str, outcome: outcome.optional(), retryable: z.boolean() })
    .optional(),
  deleted: z.boolean().optional(),
  titleStatus: z.enum(["none", "fallback", "pending", "ready", "failed"]).optional(),
  titleGeneration: num.optional(),
  titleClaim: z.looseObject({ generation: num, owner: str, until: num }).optional(),
  restoredInputs: z.array(queued).optional(),
  surface: str.optional(),
  earlierUpdates: z.array(num).optional(),
});

/** A recorded turn surface (see src/engine/run/turn_surface.ts). */
export const turnSurfaceShape: z.ZodType = z.looseObject({
  agentId: str,
  systemPrompt: str,
  tools: z.array(z.looseObject({
    name: str,
    description: str,
    inputSchema: z.record(z.string(), z.unknown()),
  })),
  gateway: z.looseObject({ provider: str, model: str, stateKey: z.string() }),
  reasoning: z.looseObject({ effort: str }).optional(),
});

/** A committed request key. */
export const requestRecordShape: z.ZodType = z.looseObject({
  op: str,
  fingerprint: str,
  result: z.record(z.string(), z.unknown()),
});

/** A stored artifact (full tool output). */
export const artifactShape: z.ZodType = z.looseObject({
  id: str,
  turnId: str,
  runId: str,
  callId: str,
  text: str,
});

const base = { seq: num, at: str, turnId: str };

/** Each entry kind's shape. */
export const entryShapes: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  [
    "turn_started",
    z.looseObject({
      ...base,
      runId: str,
      agentId: str,
      requestKey: str,
      input: input.optional(),
      // Written by releases before supplemental context moved to memory only; ignored on read.
      supplementalContext: supplemental,
      compaction: z.boolean().optional(),
      retryOf: z.looseObject({ turnId: str, mode: z.enum(["resume", "regenerate"]) }).optional(),
      labels,
      ordinal: z.number().int().nonnegative().optional(),
      surface: str.optional(),
    }),
  ],
  [
    "step",
    z.looseObject({
      ...base,
      runId: str,
      step: num,
      text: str,
      reasoning: str.optional(),
      calls: z.array(z.looseObject({
        callId: str,
        name: str,
        arguments: str,
        invalid: str.optional(),
        decision: z.enum(["allow", "ask", "deny"]).optional(),
        needsApproval: z.boolean().optional(),
        interactionId: str.optional(),
        repeated: z.boolean().optional(),
      })),
      finish: str,
      partial: z.boolean().optional(),
      usage: z.record(z.string(), num).optional(),
      stateKey: str.optional(),
      dispatched: z.array(str).optional(),
      hosted: z.array(z.looseObject({
        callId: str,
        name: str,
        query: str.optional(),
        status: z.enum(["completed", "error"]),
        results: z.array(z.looseObject({ url: str })).optional(),
      })).optional(),
      sources: z.array(z.looseObject({
        url: str,
        title: str.optional(),
        start: num.optional(),
        end: num.optional(),
      })).optional(),
    }),
  ],
  [
    "tool_dispatched",
    z.looseObject({ ...base, runId: str, callIds: z.array(str), safe: z.array(str).optional() }),
  ],
  [
    "tool_results",
    z.looseObject({
      ...base,
      runId: str,
      results: z.array(z.looseObject({
        callId: str,
        name: str,
        status: z.enum(["completed", "error", "denied", "cancelled", "unknown", "uncertain"]),
        output: str,
        artifactId: str.optional(),
        // Any JSON: tool data, or the todo list of `todo_write`.
        structured: z.unknown().optional(),
        structuredTypes: z.array(z.tuple([
          z.array(z.union([str, z.number()])),
          z.enum(["undefined", "bigint", "number", "date", "map", "set", "regexp"]),
        ])).optional(),
        activity: activity.optional(),
      })),
      ofTurnId: str.optional(),
    }),
  ],
  [
    "turn_ended",
    z.looseObject({
      ...base,
      runId: str.optional(),
      outcome,
      failure: z.looseObject({ code: str, message: str }).optional(),
    }),
  ],
  [
    "compaction",
    z.looseObject({
      ...base,
      runId: str.optional(),
      operationId: str,
      trigger: z.enum(["threshold", "overflow", "manual"]),
      status: z.enum(["compacted", "failed", "noop"]),
      tokensBefore: num,
      tokensAfter: num.optional(),
      summary: str.optional(),
      cutSeq: num.optional(),
      keptInputs: z.array(str).optional(),
      usage: z.record(z.string(), num).optional(),
      reason: str.optional(),
      interrupted: z.boolean().optional(),
    }),
  ],
  [
    "compaction_started",
    z.looseObject({
      ...base,
      runId: str.optional(),
      operationId: str,
      trigger: z.enum(["threshold", "overflow", "manual"]),
      tokensBefore: num,
    }),
  ],
  [
    "child_events",
    z.looseObject({
      ...base,
      runId: str,
      events: z.array(z.looseObject({
        key: str,
        childThreadId: str,
        fact: z.enum(["completed", "failed", "cancelled", "needs_input", "needs_approval"]),
        text: str,
      })),
    }),
  ],
  [
    "interaction_opened",
    z.looseObject({
      ...base,
      runId: str,
      interactionId: str,
      interaction: z.enum(["approval", "input"]),
      callId: str.optional(),
      toolName: str.optional(),
      questions: z.array(question).optional(),
      reaskOf: str.optional(),
    }),
  ],
  [
    "interaction_resolved",
    z.looseObject({
      ...base,
      interactionId: str,
      resolution: z.discriminatedUnion("type", [
        z.looseObject({ type: z.literal("decision"), decision: z.enum(["approve", "deny"]) }),
        z.looseObject({
          type: z.literal("answers"),
          answers: z.array(z.looseObject({ questionId: str, value: str })),
          redacted: z.array(str),
        }),
        z.looseObject({ type: z.literal("cancelled") }),
      ]),
      runId: str.optional(),
    }),
  ],
  ["steer", z.looseObject({ ...base, steerId: str, text: str })],
  ["note", z.looseObject({ ...base, runId: str, text: str })],
]);
