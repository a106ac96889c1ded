/**
 * The libSQL adapter's optional packages, each imported on first use so that
 * importing `@floret/engine/libsql` never fails: `@libsql/client` (remote
 * servers, shared clients), and for local files the native driver `libsql`
 * and `@libsql/core` (its URL parsing), both of which `@libsql/client`
 * itself depends on.
 *
 * @module
 */

import { optionalPeer } from "@floret/engine/spi";

const ENTRY = "@floret/engine/libsql";
const ALONGSIDE = "it comes with @libsql/client; install it directly if your package manager " +
  "does not expose transitive dependencies (pnpm, Deno with a package.json)";

/** `@libsql/client`, for remote URLs and shared clients. */
export const loadClient: () => Promise<typeof import("@libsql/client")> = optionalPeer({
  package: "@libsql/client",
  entry: ENTRY,
  load: () => import("@libsql/client"),
});

/** The native driver's `Database` class, for local files. */
export const loadDriver: () => Promise<typeof import("libsql")> = optionalPeer({
  package: "libsql",
  entry: ENTRY,
  hint: ALONGSIDE,
  load: () => import("libsql").then((module) => module.default),
});

/** `@libsql/core/config`: `file:` URLs are parsed exactly as the client parses them. */
export const loadConfig: () => Promise<typeof import("@libsql/core/config")> = optionalPeer({
  package: "@libsql/core",
  entry: ENTRY,
  hint: ALONGSIDE,
  load: () => import("@libsql/core/config"),
});
