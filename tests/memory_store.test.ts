import { memoryStore } from "@floret/engine";
import { kvConformance } from "@floret/engine/testing";

kvConformance("memoryStore", () => memoryStore());
