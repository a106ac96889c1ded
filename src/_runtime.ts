/**
 * The one place where the core looks at its runtime. Everything here is an
 * optional speed-up behind a feature check, with a web-standard fallback.
 *
 * @module
 */

interface NodeHash {
  update(data: string | Uint8Array): NodeHash;
  digest(encoding: "hex"): string;
}

interface NodeCrypto {
  createHash(algorithm: "sha256"): NodeHash;
  /** One-shot digest (Node 20.12+): no Hash object per call. */
  hash?(algorithm: "sha256", data: string | Uint8Array, encoding: "hex"): string;
}

/**
 * A synchronous SHA-256 (hex) where the runtime offers one — Node, Deno and
 * Bun all expose `node:crypto` through `process.getBuiltinModule` — or
 * `undefined`, in which case callers use Web Crypto. Web Crypto's digest is
 * asynchronous and round-trips through a thread pool, which costs more than
 * the hashing itself for the few kilobytes the engine hashes per request.
 */
export const sha256HexSync: ((data: string | Uint8Array) => string) | undefined = (() => {
  try {
    const process =
      (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const crypto = process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
    if (typeof crypto?.createHash !== "function") return undefined;
    const hash = crypto.hash;
    if (typeof hash === "function") {
      return (data: string | Uint8Array) => hash.call(crypto, "sha256", data, "hex");
    }
    return (data: string | Uint8Array) => crypto.createHash("sha256").update(data).digest("hex");
  } catch {
    return undefined;
  }
})();
