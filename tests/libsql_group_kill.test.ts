import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { libsqlStore } from "@floret/engine/libsql";

const child = fileURLToPath(new URL("./support/group_commit_child.ts", import.meta.url));

// The child runs on the same runtime as this test.
function command(args: string[]): [string, string[]] {
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", child, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [child, ...args]];
  return [process.execPath, ["--import", "tsx", child, ...args]];
}

/**
 * Runs the child until it acknowledged at least `atLeast` commits, then
 * SIGKILLs it after a random 0–20 ms, so the kill lands at an arbitrary point
 * of the child's group transactions rather than always between them.
 */
function runAndKill(url: string, atLeast: number): Promise<{ acked: number[]; stderr: string }> {
  const [cmd, argv] = command([url]);
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    const acked: number[] = [];
    let buffered = "";
    let stderr = "";
    let killing = false;
    proc.stdout.on("data", (chunk) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() as string;
      for (const line of lines) {
        if (line.startsWith("ACK ")) acked.push(Number(line.slice(4)));
      }
      if (acked.length >= atLeast && !killing) {
        killing = true;
        setTimeout(() => proc.kill("SIGKILL"), Math.random() * 20);
      }
    });
    proc.stderr.on("data", (chunk) => (stderr += chunk));
    proc.on("error", reject);
    proc.on("close", (_code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`child ended without the kill: ${stderr}`));
      else resolve({ acked, stderr });
    });
  });
}

test("every commit acknowledged before a SIGKILL mid-group is there after reopening", {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "floret-group-kill-"));
  try {
    const url = `file:${join(dir, "killed.db")}`;
    const { acked } = await runAndKill(url, 500);
    assert.ok(acked.length >= 500, `only ${acked.length} acknowledgements`);
    const store = libsqlStore({ url });
    const acks = await store.list({ prefix: ["ack"] });
    const pairs = await store.list({ prefix: ["pair"] });
    const present = new Set(acks.map((entry) => entry.key[1] as number));
    const missing = acked.filter((n) => !present.has(n));
    assert.deepEqual(missing, [], "acknowledged commits lost");
    // All or nothing: every commit's two keys are there together, with one version.
    assert.deepEqual(
      pairs.map((entry) => [entry.key[1], entry.version]),
      acks.map((entry) => [entry.key[1], entry.version]),
    );
    // The kill landed mid-stream: commits ran after the last acknowledgement was read.
    console.log(`acknowledged ${acked.length}, found ${present.size} after the kill`);
    const next = await store.commit({ set: [{ key: ["after"], value: Uint8Array.of(1) }] });
    assert.ok(next.ok);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
