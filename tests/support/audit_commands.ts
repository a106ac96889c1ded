/**
 * Shared set-up for the command audit (tests/audit_commands_*.test.ts): a
 * store that a second host can reopen (a memory store kept open, or a
 * libSQL file), and a host on it with one scripted agent, through the
 * public API only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defineAgent,
  type Host,
  isFloretError,
  type KvStore,
  type LocalThreadService,
  memoryStore,
  openHost,
  type ThreadView,
  type ToolDefinition,
} from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import type { ScriptedGateway } from "@floret/engine/testing";
import { FAST_RETRY } from "./engine.ts";
import { keepOpen } from "./interactions.ts";

/** A store that survives its host: each `open()` is a new handle on the same data. */
export interface Backend {
  name: string;
  open(): KvStore;
  /** Removes what the backend left on disk. */
  dispose(): void;
}

/** The two backends every storage-sensitive audit runs on. */
export const BACKENDS: { name: string; make: () => Backend }[] = [
  {
    name: "memory",
    make: () => {
      const store = memoryStore();
      return { name: "memory", open: () => keepOpen(store), dispose: () => {} };
    },
  },
  {
    name: "libsql",
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), "floret-audit-cmd-"));
      const url = `file:${join(dir, "journal.db")}`;
      return {
        name: "libsql",
        open: () => libsqlStore({ url }),
        dispose: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
];

/** A host on a backend with one agent. */
export interface AuditHost {
  host: Host;
  threads: LocalThreadService;
}

/** Opens a host on `backend` whose agent streams from `gateway` (shared across restarts). */
export async function openAudit(
  backend: Backend,
  gateway: ScriptedGateway,
  tools: ToolDefinition[] = [],
): Promise<AuditHost> {
  const host = await openHost({ store: backend.open() });
  const threads = host.threads({
    agent: defineAgent({
      id: "audit",
      systemPrompt: "Audit.",
      gateway,
      tools,
      providerRetry: FAST_RETRY,
    }),
  }) as LocalThreadService;
  return { host, threads };
}

/** The durable part of a view: everything but the process-local version and live progress. */
export function durable(view: ThreadView): Record<string, unknown> {
  const { viewVersion: _v, runProgress: _p, ...rest } = view as ThreadView & {
    runProgress?: unknown;
  };
  return structuredClone(rest);
}

/** The code of a rejection, or a marker when the promise fulfilled or threw something else. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "fulfilled";
  } catch (error) {
    return isFloretError(error) ? error.code : `not a FloretError: ${String(error)}`;
  }
}
