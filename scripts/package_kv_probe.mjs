// Run by check_package.mjs with `node --test` in a scratch project: the
// storage conformance suite from the packed `@floret/engine/testing`, kept
// small (the repository's own tests run it in full).
import { memoryStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";

kvConformance("memoryStore from the tarball", () => memoryStore(), {
  modelRuns: 2,
  largeValueBytes: 1024,
});
