// Child process of libsql_multiprocess.test.ts: increments one counter in a
// shared file database with checked read-modify-write commits, retrying on
// conflicts, then prints how many increments it made and how many conflicts
// it saw. Any thrown error exits non-zero.
import { libsqlStore } from "@floret/engine/libsql";

const [url, startText, countText] = process.argv.slice(-3);
// Start together so the commits really overlap despite different startup times.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startText) - Date.now())));
const store = libsqlStore({ url });
const key = ["counter"];
let conflicts = 0;
for (let done = 0; done < Number(countText);) {
  const [entry] = await store.getMany([key]);
  const current = entry ? new DataView(entry.value.buffer).getUint32(0) : 0;
  const next = new Uint8Array(4);
  new DataView(next.buffer).setUint32(0, current + 1);
  const result = await store.commit({
    checks: [{ key, version: entry?.version ?? null }],
    set: [{ key, value: next }, { key: ["log", entry?.version ?? "none"], value: next }],
  });
  if (result.ok) done += 1;
  else conflicts += 1;
}
await store.close();
console.log(JSON.stringify({ increments: Number(countText), conflicts }));
