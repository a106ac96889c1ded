// A fetch that keeps every request body it is given and answers with a fixed
// reply (by default a provider error), so tests can read what a gateway sent
// without any network.

/** What a {@link captureFetch} saw. */
export interface Captured {
  fetch: typeof globalThis.fetch;
  bodies: Record<string, unknown>[];
}

/**
 * @param status the HTTP status of every answer (default 400: the turn fails, nothing more is sent)
 * @param body the answer's JSON body
 */
export function captureFetch(
  status = 400,
  body: unknown = { error: { type: "invalid_request_error", message: "captured" } },
): Captured {
  const bodies: Record<string, unknown>[] = [];
  const fetch = ((_input: RequestInfo | URL, init?: RequestInit) => {
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return Promise.resolve(
      new Response(JSON.stringify(body), {
        status,
        headers: { "content-type": "application/json" },
      }),
    );
  }) as typeof globalThis.fetch;
  return { fetch, bodies };
}
