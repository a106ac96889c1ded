// Child process of libsql_group_kill.test.ts. It commits to a libSQL file from
// 50 concurrent workers (so commits share group transactions) and prints
// `ACK <n>` for every commit whose promise resolved. Each commit sets two keys,
// ["ack", n] and ["pair", n], so the parent can also check atomicity. It
// never stops by itself: the parent SIGKILLs it, and a watchdog ends it if the
// parent does not.
//
// Usage: group_commit_child.ts <libsql url>
import { libsqlStore } from "@floret/engine/libsql";

const [url] = process.argv.slice(-1);
setTimeout(() => {
  console.error("group_commit_child: watchdog expired");
  process.exit(3);
}, 30_000);

const WORKERS = 50;
const store = libsqlStore({ url });
// One write() per acknowledgement, after the commit resolved: what the parent
// reads was acknowledged, never merely attempted.
const ack = (n: number): void => void process.stdout.write(`ACK ${n}\n`);
// Workers that each start their next commit as soon as the last one resolved,
// so group transactions run back to back and the kill lands inside one.
let next = 0;
await Promise.all(Array.from({ length: WORKERS }, async () => {
  for (;;) {
    const n = next++;
    const value = new TextEncoder().encode(`commit ${n}`);
    const result = await store.commit({
      checks: [{ key: ["ack", n], version: null }],
      set: [{ key: ["ack", n], value }, { key: ["pair", n], value }],
    });
    if (!result.ok) throw new Error(`commit ${n} failed its check`);
    ack(n);
  }
}));
