/**
 * An optional package that is absent says "not installed — install it"; one
 * that is installed but fails to load (a Deno permission, a native binding)
 * says so with its cause and never tells the user to install it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { optionalPeer } from "../src/optional_peer.ts";

const peer = (error: unknown) =>
  optionalPeer({
    package: "@libsql/client",
    entry: "@floret/engine/libsql",
    load: () => Promise.reject(error),
  });

test("a package that is not installed is reported with how to install it", async () => {
  // A real failed import on this runtime, for a package nobody installs.
  const real = await import("floret-no-such-package-" + "x").catch((error: unknown) => error);
  const missing = optionalPeer({
    package: "floret-no-such-package-x",
    entry: "@floret/engine/x",
    load: () => Promise.reject(real),
  });
  await assert.rejects(missing(), /is not installed .*npm install floret-no-such-package-x/);
  const node = Object.assign(new Error("Cannot find package '@libsql/client' imported from x"), {
    code: "ERR_MODULE_NOT_FOUND",
  });
  await assert.rejects(peer(node)(), /is not installed .*npm install @libsql\/client/);
});

test("an installed package that fails to load says why and does not say install", async () => {
  const denied = Object.assign(
    new Error('Requires env access to "LIBSQL_JS_DEV", run again with the --allow-env flag'),
    { name: "NotCapable" },
  );
  const error = await peer(denied)().catch((e: Error) => e);
  assert.match(error.message, /is installed but could not be loaded .*Requires env access/);
  assert.match(error.message, /permission may be missing/);
  assert.doesNotMatch(error.message, /npm install/);
  assert.equal(error.cause, denied);
  const native = Object.assign(new Error("Cannot find module '@libsql/linux-x64-gnu'"), {
    code: "MODULE_NOT_FOUND",
  });
  const nativeError = await peer(native)().catch((e: Error) => e);
  assert.match(nativeError.message, /is installed but could not be loaded .*linux-x64-gnu/);
  assert.doesNotMatch(nativeError.message, /npm install/);
});
