import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isFloretError } from "@floret/engine";
import { backupLibsql, libsqlStore, maintainLibsql } from "@floret/engine/libsql";
import { startHranaServer } from "./support/hrana_server.ts";

const dir = mkdtempSync(join(tmpdir(), "floret-maint-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const freshPath = (): string => join(dir, `db-${++counter}.db`);
const holder = fileURLToPath(new URL("./support/libsql_holder_child.ts", import.meta.url));

// The child runs on the same runtime as this test.
function command(args: string[]): [string, string[]] {
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", holder, ...args]];
  if ("Bun" in globalThis) return [process.execPath, [holder, ...args]];
  return [process.execPath, ["--import", "tsx", holder, ...args]];
}

/** Starts the child; resolves with it once it printed `line`. */
function startChild(
  args: string[],
  line: string,
): Promise<{ kill: () => Promise<void>; done: Promise<number | null> }> {
  const [cmd, argv] = command(args);
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const done = new Promise<number | null>((resolve) => proc.on("close", resolve));
  return new Promise((resolve, reject) => {
    proc.stderr.on("data", (chunk) => (stderr += chunk));
    proc.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (stdout.includes(line)) {
        resolve({
          kill: async () => {
            proc.kill("SIGKILL");
            await done;
          },
          done,
        });
      }
    });
    proc.on("error", reject);
    void done.then((code) => {
      if (!stdout.includes(line)) reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("backupLibsql", () => {
  test("copies a store with an idle host on it, committed WAL records included", async () => {
    const url = `file:${freshPath()}`;
    const store = libsqlStore({ url });
    for (let i = 0; i < 30; i++) {
      await store.commit({ set: [{ key: ["item", i], value: bytes(`value ${i}`) }] });
    }
    await store.commit({ delete: [["item", 3]] });
    const original = await store.list({ prefix: [] });
    const copy = join(dir, "backup-idle.db");
    await backupLibsql({ url }, copy);
    // Self-contained: the records reached the copy's main file, no WAL beside it.
    assert.ok(!existsSync(`${copy}-wal`));
    const restored = libsqlStore({ url: `file:${copy}` });
    const copied = await restored.list({ prefix: [] });
    assert.equal(copied.length, 29);
    assert.deepEqual(copied, original);
    // The copy is a working store: versions keep growing past the original's.
    const next = await restored.commit({ set: [{ key: ["after"], value: bytes("x") }] });
    assert.ok(next.ok && next.version > original.at(-1)!.version);
    // The host on the original was never disturbed.
    assert.ok((await store.commit({ set: [{ key: ["still"], value: bytes("ok") }] })).ok);
    await restored.close();
    await store.close();
  });

  test("never overwrites: an existing destination is refused and left untouched", async () => {
    const url = `file:${freshPath()}`;
    const store = libsqlStore({ url });
    await store.commit({ set: [{ key: ["k"], value: bytes("v") }] });
    const taken = join(dir, "taken.db");
    writeFileSync(taken, "precious");
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    for (const destination of [taken, empty]) {
      await assert.rejects(
        backupLibsql({ url }, destination),
        (e) => isFloretError(e, "invalid_input") && /exists/.test(e.message),
      );
    }
    assert.equal(readFileSync(taken, "utf8"), "precious");
    assert.equal(statSync(empty).size, 0);
    await store.close();
  });

  test("copies a store on a libSQL server into a local store file", async () => {
    const server = await startHranaServer(join(dir, "remote"));
    try {
      const url = server.newDatabaseUrl();
      const store = libsqlStore({ url });
      // More rows than one page of the copy, so paging is exercised.
      for (let i = 0; i < 1200; i += 300) {
        await store.commit({
          set: Array.from({ length: 300 }, (_, j) => ({
            key: ["remote", i + j],
            value: bytes(`v${i + j}`),
          })),
        });
      }
      const original = await store.list({ prefix: [] });
      const copy = join(dir, "backup-remote.db");
      await backupLibsql({ url, authToken: "unused-by-the-test-server" }, copy);
      await store.close();
      assert.ok(!existsSync(`${copy}-journal`) && !existsSync(`${copy}-wal`));
      const restored = libsqlStore({ url: `file:${copy}` });
      assert.deepEqual(await restored.list({ prefix: [] }), original);
      const next = await restored.commit({ set: [{ key: ["after"], value: bytes("x") }] });
      assert.ok(next.ok && next.version > original.at(-1)!.version);
      await restored.close();
    } finally {
      await server.close();
    }
  });

  test("a failed remote copy leaves no destination behind", async () => {
    const destination = join(dir, "unreachable.db");
    await assert.rejects(
      backupLibsql({ url: "http://127.0.0.1:1" }, destination),
      (e) => isFloretError(e, "storage_failure"),
    );
    assert.ok(!existsSync(destination));
  });

  test("refuses what is not a database, before touching the destination", async () => {
    const destination = join(dir, "never.db");
    for (const url of [":memory:", "ftp://127.0.0.1/db", `file:${join(dir, "missing.db")}`]) {
      await assert.rejects(
        backupLibsql({ url }, destination),
        (e) => isFloretError(e, "invalid_input"),
        url,
      );
    }
    assert.ok(!existsSync(destination));
    assert.ok(!existsSync(join(dir, "missing.db")), "no empty database was created");
  });
});

describe("maintainLibsql", () => {
  test("new stores use incremental auto-vacuum and maintenance frees deleted pages", {
    timeout: 60_000,
  }, async () => {
    const path = freshPath();
    const url = `file:${path}`;
    const filler = await startChild(["fill", url], "FILLED");
    assert.equal(await filler.done, 0);
    // Header byte 52 (largest root page, non-zero with auto-vacuum) and 64 (incremental flag).
    const header = new DataView(readFileSync(path).buffer);
    assert.ok(header.getUint32(52) > 0 && header.getUint32(64) === 1, "incremental auto-vacuum");
    const { freedPages } = await maintainLibsql({ url });
    // 300 values of 3,000 bytes took at least one 4 KiB page each.
    assert.ok(freedPages >= 250, `freed ${freedPages} pages`);
    assert.ok(statSync(path).size < 150 * 4096, `file is ${statSync(path).size} bytes`);
    const again = await maintainLibsql({ url });
    assert.equal(again.freedPages, 0);
    const store = libsqlStore({ url });
    const kept = await store.list({ prefix: ["kept"] });
    assert.equal(kept.length, 40);
    assert.deepEqual(await store.list({ prefix: ["bulky"] }), []);
    assert.ok((await store.commit({ set: [{ key: ["later"], value: bytes("x") }] })).ok);
    await store.close();
  });

  test("refuses while a store in this process has the database open", async () => {
    const url = `file:${freshPath()}`;
    const store = libsqlStore({ url });
    await store.commit({ set: [{ key: ["k"], value: bytes("v") }] });
    await assert.rejects(
      maintainLibsql({ url }),
      (e) => isFloretError(e, "storage_failure") && /in use/.test(e.message),
    );
    // The refusal changed nothing for the host.
    assert.ok((await store.commit({ set: [{ key: ["k2"], value: bytes("v") }] })).ok);
    assert.equal((await store.list({ prefix: [] })).length, 2);
    await store.close();
  });

  test("refuses while an idle host in another process has it open, and runs once it is gone", {
    timeout: 60_000,
  }, async () => {
    const url = `file:${freshPath()}`;
    const child = await startChild(["hold", url], "READY");
    try {
      await assert.rejects(
        maintainLibsql({ url }),
        (e) => isFloretError(e, "storage_failure") && /in use/.test(e.message),
      );
    } finally {
      await child.kill();
    }
    const result = await maintainLibsql({ url });
    assert.equal(typeof result.freedPages, "number");
  });

  test("refuses remote, in-memory and missing databases with invalid_input", async () => {
    for (const url of [":memory:", "libsql://127.0.0.1:1", `file:${join(dir, "nothing.db")}`]) {
      await assert.rejects(maintainLibsql({ url }), (e) => isFloretError(e, "invalid_input"), url);
    }
    await assert.rejects(
      maintainLibsql(null as unknown as { url: string }),
      (e) => isFloretError(e, "invalid_input"),
    );
  });
});
