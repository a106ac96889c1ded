/**
 * Loading of optional peer dependencies. The engine's only hard dependency is
 * zod; each adapter's package (`@libsql/client`, `openai`, …) is an optional
 * peer the host installs when it uses that adapter. Adapters import their
 * package on first use through {@link optionalPeer}, so importing an entry
 * point never fails, and a missing package is reported with the command that
 * installs it instead of a resolver error naming one of our internal files.
 *
 * @module
 */

/** What {@link optionalPeer} needs to know about one package. */
export interface OptionalPeer<T> {
  /** The npm package name, as the user would install it. */
  package: string;
  /** The entry point that needs it, e.g. `@floret/engine/libsql`. */
  entry: string;
  /**
   * Imports the package. A closure with a literal specifier keeps the import
   * visible to bundlers, `deno info` and `deno publish`.
   */
  load: () => Promise<T>;
  /** Extra advice appended to the message when loading fails. */
  hint?: string;
}

/**
 * Returns a function that imports an optional package once and shares the
 * result. A failed import is not cached, so installing the package (or fixing
 * its permissions) and calling again works without a restart.
 *
 * @param peer the package, the entry that needs it and its importer
 * @returns the memoised importer; it rejects with an `Error` whose message
 *   names the package and how to install it (the original failure is `cause`)
 * @example
 * ```ts ignore
 * const loadClient = optionalPeer({
 *   package: "@libsql/client",
 *   entry: "@floret/engine/libsql",
 *   load: () => import("@libsql/client"),
 * });
 * const { createClient } = await loadClient();
 * ```
 */
export function optionalPeer<T>(peer: OptionalPeer<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= peer.load().catch((error: unknown) => {
      loading = undefined;
      throw missingPeerError(peer, error);
    });
    return loading;
  };
}

/**
 * Whether a failed import says the package itself is absent (not a file or
 * native binding inside it, not a permission): Node and Bun say
 * "Cannot find package/module 'name'", Deno "Could not find ... 'name'" or
 * "Module not found".
 */
function isAbsent(peer: OptionalPeer<unknown>, cause: unknown): boolean {
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  const notFound = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" ||
    /cannot find (package|module)|could not find|module not found|not found in import map/i
      .test(message);
  return notFound && message.includes(peer.package);
}

/** Whether a failure reads as a missing Deno permission. */
function isPermission(cause: unknown): boolean {
  const name = cause instanceof Error ? cause.name : "";
  const message = cause instanceof Error ? cause.message : String(cause);
  return name === "NotCapable" || name === "PermissionDenied" ||
    /requires .* access|--allow-|NotCapable|PermissionDenied/i.test(message);
}

function missingPeerError(peer: OptionalPeer<unknown>, cause: unknown): Error {
  const name = peer.package;
  const detail = cause instanceof Error ? cause.message : String(cause);
  if (!isAbsent(peer, cause)) {
    // Installed, but its import failed: say why, and do not send the user to install it again.
    const permission = isPermission(cause)
      ? " On Deno a permission may be missing (see docs/deno.md for the list this entry needs)."
      : "";
    return new Error(
      `Optional package ${name} is installed but could not be loaded for ${peer.entry}: ` +
        `${detail}.${permission}` + (peer.hint ? ` ${peer.hint}` : ""),
      { cause },
    );
  }
  return new Error(
    `Optional package ${name} is not installed (needed by ${peer.entry}): ` +
      `install it with \`npm install ${name}\` (Deno: \`deno add npm:${name}\`)` +
      (peer.hint ? `; ${peer.hint}` : "") + `. Cause: ${detail}`,
    { cause },
  );
}
