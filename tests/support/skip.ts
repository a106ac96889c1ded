// Skips that say why on every runtime. node --test prints a skip's reason,
// but deno test and bun test print only the test's name; so a test that skips
// for what the machine cannot do also writes one line to stderr, which the
// gate (scripts/test.mjs) collects to list every skip with its reason.

/** The prefix of the line the gate looks for. */
export const SKIP_MARK = "floret-skip:";

const told = new Set<string>();

/**
 * Returns `reason` unchanged (for a test's `skip` option, or before
 * `t.skip(reason)`), first telling it once on stderr as
 * `floret-skip: tests/<file>: <reason>`.
 *
 * @param moduleUrl the calling test's `import.meta.url`
 * @param reason why the test cannot run here, or false when it can
 */
export function skipBecause(moduleUrl: string, reason: string | false): string | false {
  if (reason === false) return false;
  const path = decodeURIComponent(new URL(moduleUrl).pathname);
  const file = path.slice(path.lastIndexOf("/tests/") + 1);
  const line = `${SKIP_MARK} ${file}: ${reason}`;
  if (!told.has(line)) {
    told.add(line);
    console.error(line);
  }
  return reason;
}

/** Deno KV's reason, shared by the files that run a store on `Deno.openKv`. */
export const DENO_KV_ONLY = "Deno KV exists only on Deno (Deno.openKv); skipped on this runtime";

/** `skipBecause(moduleUrl, …)` with {@link DENO_KV_ONLY} off Deno, else false. */
export function skipOffDeno(moduleUrl: string): string | false {
  return skipBecause(moduleUrl, "Deno" in globalThis ? false : DENO_KV_ONLY);
}
