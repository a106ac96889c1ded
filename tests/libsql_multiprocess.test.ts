import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { libsqlStore } from "@floret/engine/libsql";

const WORKERS = 3;
const INCREMENTS = 150;
const worker = fileURLToPath(new URL("./support/counter_worker.ts", import.meta.url));

// The child runs on the same runtime as this test.
function command(args: string[]): [string, string[]] {
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", worker, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [worker, ...args]];
  return [process.execPath, ["--import", "tsx", worker, ...args]];
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, argv] = command(args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("processes racing on one file database lose no write", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "floret-mp-"));
  try {
    const url = `file:${join(dir, "shared.db")}`;
    const results = await Promise.all(
      Array.from(
        { length: WORKERS },
        () => run([url, String(Date.now() + 1500), String(INCREMENTS)]),
      ),
    );
    for (const result of results) {
      console.log(result.stdout.trim());
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        JSON.parse(result.stdout.trim().split("\n").at(-1) as string).increments,
        INCREMENTS,
      );
    }
    const store = libsqlStore({ url });
    const [entry] = await store.getMany([["counter"]]);
    assert.ok(entry);
    assert.equal(new DataView(entry.value.buffer).getUint32(0), WORKERS * INCREMENTS);
    // Every increment read a distinct version: no two commits passed a check on the same one.
    assert.equal((await store.list({ prefix: ["log"] })).length, WORKERS * INCREMENTS);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
