/**
 * The lifecycle suite: send, request keys, attachments, the queue, cancel and
 * retry. It runs twice: on the in-process service (engine_lifecycle.test.ts)
 * and through `threadClient` over `threadApi` (http_lifecycle.test.ts), to show
 * the same program works either way. The tests live in two parts,
 * lifecycle_sends.ts and lifecycle_queue.ts.
 */
import type { ThreadService } from "@floret/engine";
import { engine as inProcessEngine, type TestEngine } from "./engine.ts";
import { lifecycleSends } from "./lifecycle_sends.ts";
import { lifecycleQueue } from "./lifecycle_queue.ts";

/** What the suite's parts use: how to make an engine, and how to wrap a service of their own. */
export interface SuiteTools {
  /** An engine whose `threads` is wrapped (the in-process factory's signature). */
  engine: (...args: Parameters<typeof inProcessEngine>) => Promise<TestEngine>;
  /** Turns an in-process service into the one the tests use. */
  wrap: (threads: ThreadService) => ThreadService;
}

/**
 * Registers the suite.
 *
 * @param wrap turns the in-process service into the one the tests use
 */
export function lifecycleSuite(wrap: (threads: ThreadService) => ThreadService): void {
  const engine = async (...args: Parameters<typeof inProcessEngine>): Promise<TestEngine> => {
    const e = await inProcessEngine(...args);
    return { ...e, threads: wrap(e.threads) };
  };

  lifecycleSends({ engine, wrap });
  lifecycleQueue({ engine, wrap });
}
