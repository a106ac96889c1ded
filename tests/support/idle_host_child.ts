/**
 * A host that runs two turns (tool call, then the answer) and is then left
 * open, never shut down: the process must still end by itself, since an idle
 * host holds no timer that keeps it alive (the lease keeper's included).
 * Prints `idle` once the thread is idle.
 */
import { engine, sendAndWait } from "./engine.ts";

const e = await engine([
  { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
  { text: "3" },
  { text: "again" },
]);
await sendAndWait(e, "add 1 and 2");
await sendAndWait(e, "once more");
console.log("idle");
