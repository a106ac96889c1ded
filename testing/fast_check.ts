/**
 * fast-check for the property-based conformance cases. It is an optional
 * peer of the package: `scriptedGateway` and `gatewayConformance` work
 * without it, and `kvConformance`'s random cases report a missing package
 * with the command that installs it when they run.
 *
 * @module
 */
import { optionalPeer } from "../src/optional_peer.ts";

/** The fast-check module. */
export type FastCheck = typeof import("fast-check");

/**
 * Loads fast-check once per process.
 *
 * @returns the module
 * @throws {Error} naming the package and how to install it when it is missing
 */
export const loadFastCheck: () => Promise<FastCheck> = optionalPeer<FastCheck>({
  package: "fast-check",
  entry: "@floret/engine/testing (kvConformance)",
  load: () => import("fast-check"),
});
