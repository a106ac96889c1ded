/**
 * Types for `harness.mjs`, a copy of the peers' measurement harness
 * (`bench/peers/lib/harness.mjs` of the shared docs): timing, phases,
 * verification and the `RESULT <json>` line.
 *
 * @module
 */

/** What one conversation reports back to the harness for verification. */
export interface ConversationResult {
  /** The engine's final assistant text; must be `done`. */
  finalText: string | undefined;
  /** Tool results the engine's own result object shows, or `null` if it shows none. */
  toolResults: number | null;
}

/** What `setup` returns: one engine built once, outside the timed region. */
export interface BenchImpl {
  /** Written into the result line: what is persisted, fsync policy, … */
  info?: string;
  /** Runs one conversation to completion under a fresh id. */
  runConversation(convId: string): Promise<ConversationResult>;
  /** Closes the engine; may return extra facts for the result line. */
  teardown?(): Promise<Record<string, unknown> | undefined>;
}

/** The measurement a process was started for. */
export interface BenchSetup {
  /** `--variant` */
  variant: string;
  /** `--n`: tool steps per conversation. */
  N: number;
  /** `--mode`: `seq` or `conc`. */
  mode: string;
}

/** Parses the command line, runs the phases and prints one `RESULT <json>` line. */
export function runBench(
  peer: string,
  versions: Record<string, string>,
  setup: (options: BenchSetup) => Promise<BenchImpl>,
): Promise<void>;

/** The installed version of a package, or `unknown`. */
export function pkgVersion(name: string): string;
