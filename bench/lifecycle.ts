/**
 * Host lifecycle costs on a libSQL file: a normal open that settles
 * unfinished turns, a deferred open plus `activate()`, and `prepareRestore()`
 * over a store of idle threads with some unfinished turns and queued inputs.
 *
 *   npx tsx bench/lifecycle.ts [--threads 1000] [--unfinished 100]
 *
 * The store is built once per scenario by a host whose runs hang (then shut
 * down with a short signal, leaving their turns unfinished), copied, and each
 * measured host opens its own copy.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, type Gateway, openHost } from "@floret/engine";
import { libsqlStore } from "@floret/engine/libsql";
import { scriptedGateway } from "@floret/engine/testing";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i], process.argv[i + 1]);
const THREADS = Number(args.get("--threads") ?? 1000);
const UNFINISHED = Number(args.get("--unfinished") ?? 100);

const answering: Gateway = {
  info: scriptedGateway([]).info,
  async *stream() {
    yield { type: "text", delta: "ok" };
    yield { type: "finish", reason: "stop" };
  },
};
const hanging: Gateway = {
  info: scriptedGateway([]).info,
  // Never yields: the stream ends only by its abort.
  stream: (_request, { signal }) => ({
    [Symbol.asyncIterator]: () => ({
      next: () =>
        new Promise<IteratorResult<never>>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason))
        ),
    }),
  }),
};

async function build(path: string): Promise<void> {
  let gateway: Gateway = answering;
  const agentGateway: Gateway = { info: answering.info, stream: (r, o) => gateway.stream(r, o) };
  const host = await openHost({ store: libsqlStore({ url: `file:${path}` }) });
  const threads = host.threads({
    agent: defineAgent({ id: "b", systemPrompt: "x", gateway: agentGateway }),
  });
  for (let i = 0; i < THREADS; i++) {
    const { threadId } = await threads.create({ requestKey: `c${i}` });
    if (i < THREADS - UNFINISHED) {
      await threads.send({ threadId, requestKey: "s", input: { text: `hello ${i}` } });
      await threads.waitForIdle(threadId);
      continue;
    }
    gateway = hanging;
    await threads.send({ threadId, requestKey: "s", input: { text: `hangs ${i}` } });
    await threads.send({ threadId, requestKey: "q", input: { text: `queued ${i}` } });
  }
  await host.shutdown({ signal: AbortSignal.timeout(2_000) });
}

function copy(from: string, to: string): void {
  for (const suffix of ["", "-wal", "-shm"]) {
    if (existsSync(from + suffix)) copyFileSync(from + suffix, to + suffix);
  }
}

async function timed<T>(label: string, body: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await body();
  const ms = performance.now() - start;
  console.log(`${label}: ${ms.toFixed(1)} ms`);
  return result;
}

const dir = mkdtempSync(join(tmpdir(), "floret-bench-lifecycle-"));
try {
  const source = join(dir, "source.db");
  await timed(
    `build ${THREADS} threads (${UNFINISHED} unfinished, each with 1 queued input)`,
    () => build(source),
  );
  for (const scenario of ["normal", "deferred", "restore"] as const) {
    const path = join(dir, `${scenario}.db`);
    copy(source, path);
    const host = await timed(`${scenario}: openHost`, () =>
      openHost({
        store: libsqlStore({ url: `file:${path}` }),
        deferExecution: scenario !== "normal",
      }));
    if (scenario === "restore") {
      const report = await timed("restore: prepareRestore", () => host.prepareRestore());
      console.log(`restore: report ${JSON.stringify(report)}`);
    }
    if (scenario !== "normal") await timed(`${scenario}: activate`, () => host.activate());
    await host.shutdown();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
