// Storage fault injection at every commit point x every fault kind, over a
// file-backed Deno KV store (`denoKvStore(await Deno.openKv(file))`, a fresh
// file per run). The matrix is tests/support/storage_faults.ts, shared with the
// memory-store run. Only Deno has Deno KV: on Bun and Node this is skipped,
// saying so.
import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { denoKvStore } from "@floret/engine/deno-kv";
import { storageFaultTest } from "./support/storage_faults.ts";
import { skipOffDeno } from "./support/skip.ts";

const deno = (globalThis as { Deno?: { openKv(path: string): Promise<unknown> } }).Deno;
const skip = skipOffDeno(import.meta.url);

const dir = mkdtempSync(join(tmpdir(), "floret-faults-denokv-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let runs = 0;

storageFaultTest(
  "Deno KV file",
  async () => denoKvStore(await deno!.openKv(join(dir, `run-${++runs}.kv`)), { closeKv: true }),
  { skip },
);
