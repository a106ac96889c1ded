// Audit (round 11): an idle host lets its process exit. Since round 10 the
// lease timer is only unreferenced between runs, the first provider attempt
// and the retry sleep are built differently, and waits, cancels and graceful
// windows each arm timers. A host left open (never shut down) after runs with
// tools, approvals, cancels of a stream and of a deaf tool, a graceful cancel,
// a cancel during a 60 s retry sleep and waits with 10-minute timeouts, with a
// thread left waiting for an approval, must not keep its process alive.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "floret-audit-idle-"));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const store of ["memory", "libsql"] as const) {
  test(`a host left open after a run's whole life does not keep its process alive (${store})`, {
    timeout: 60_000,
  }, async () => {
    const child = fileURLToPath(new URL("./support/audit_idle_child.ts", import.meta.url));
    const args = store === "libsql" ? [child, `file:${join(dir, "idle.db")}`] : [child];
    const [cmd, argv]: [string, string[]] = "Deno" in globalThis
      ? [process.execPath, ["run", "-A", ...args]]
      : "Bun" in globalThis
      ? [process.execPath, args]
      : [process.execPath, ["--import", "tsx", ...args]];
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk) => (stdout += chunk));
    proc.stderr.on("data", (chunk) => (stderr += chunk));
    // Every timer the scenario could leak is 60 s or more (the retry sleep, the first-output
    // clock, the waits' timeouts); the lease timer ticks every 10 s. A process held by any of
    // them is still alive long after this; one that ends by itself is gone within seconds.
    let killed = false;
    const guard = setTimeout(() => {
      killed = true;
      proc.kill("SIGKILL");
    }, 9_000);
    const code = await new Promise<number | null>((resolve) => proc.on("close", resolve));
    clearTimeout(guard);
    assert.equal(stdout.trim(), "idle", stderr);
    assert.equal(killed, false, "the idle host kept its process alive");
    assert.equal(code, 0, stderr);
  });
}
