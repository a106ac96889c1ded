// Child process of libsql_maintenance.test.ts, so the parent can work on a
// database no connection of its own has touched (the native driver keeps a
// closed connection's locks until its statements are garbage-collected).
//
// Usage: libsql_holder_child.ts <mode> <libsql url>
//   fill  commit 40 kept keys and 300 bulky ones, delete the bulky ones, exit
//   hold  open a store, commit once, print READY and stay idle until killed
import { libsqlStore } from "@floret/engine/libsql";

const [mode, url] = process.argv.slice(-2);
setTimeout(() => {
  console.error("libsql_holder_child: watchdog expired");
  process.exit(3);
}, 30_000);

const store = libsqlStore({ url });
if (mode === "fill") {
  for (let i = 0; i < 40; i++) {
    await store.commit({ set: [{ key: ["kept", i], value: new Uint8Array([i]) }] });
  }
  const bulky = new Uint8Array(3000).fill(7);
  for (let i = 0; i < 300; i += 50) {
    await store.commit({
      set: Array.from({ length: 50 }, (_, j) => ({ key: ["bulky", i + j], value: bulky })),
    });
  }
  await store.commit({ delete: Array.from({ length: 300 }, (_, i) => ["bulky", i]) });
  await store.close();
  console.log("FILLED");
  process.exit(0);
} else if (mode === "hold") {
  await store.commit({ set: [{ key: ["held"], value: new Uint8Array([1]) }] });
  console.log("READY");
  await new Promise(() => {});
} else {
  throw new Error(`Unknown mode: ${mode}`);
}
