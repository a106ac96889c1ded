/**
 * The in-process service behind `threadApi`, reached through `threadClient`
 * with the app's own fetch: the whole HTTP path, no socket.
 */
import type { LocalThreadService, ThreadService } from "@floret/engine";
import { threadApi, threadClient } from "@floret/engine/http";

/** A client for `threads` over the HTTP API, in-process. */
export function overHttp(threads: ThreadService): LocalThreadService {
  const app = threadApi(threads, {
    authorize: () => true,
    basePath: "/api-test",
    turnControl: true,
  });
  return threadClient({ baseUrl: "http://127.0.0.1/api-test", fetch: (r) => app.fetch(r) });
}
