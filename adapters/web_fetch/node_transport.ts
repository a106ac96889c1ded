/**
 * The default web_fetch transport, on `node:http` and `node:https` (which
 * Node, Bun and Deno all provide). It connects to the address that was
 * checked, never to the name: the name goes only into the Host header and,
 * for TLS, into SNI and certificate verification. So no second lookup can
 * answer differently (DNS rebinding).
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import * as http from "node:http";
import * as https from "node:https";
import type { ConnectTarget, Transport } from "../../src/tools/web_fetch/guarded_fetch.ts";

/** TLS settings for tests (a private CA for a loopback server). */
export interface NodeTransportTls {
  /** Extra trusted CA certificates, PEM. */
  ca?: string;
}

/**
 * A transport that sends a GET to `target.address:target.port`, with the
 * request's URL host as Host header and TLS server name.
 *
 * @param tls extra TLS trust (tests only)
 * @returns the transport
 */
export function nodeTransport(tls: NodeTransportTls = {}): Transport {
  return (request, target) => send(request, target, tls);
}

function send(request: Request, target: ConnectTarget, tls: NodeTransportTls): Promise<Response> {
  const url = new URL(request.url);
  const secure = url.protocol === "https:";
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => {
    headers[key] = value;
  });
  headers["host"] = url.host;
  const name = url.hostname.replace(/\.$/, "");
  // SNI carries names only (RFC 6066); for an IP URL the certificate is checked against the IP.
  const isIp = name.startsWith("[") || /^[\d.]+$/.test(name);
  const options: https.RequestOptions = {
    host: target.address,
    port: target.port,
    method: "GET",
    path: `${url.pathname}${url.search}`,
    headers,
    // A fresh connection per request: pooled sockets are keyed by address, not by checked name.
    agent: false,
    ...(secure ? { servername: isIp ? undefined : name, ca: tls.ca } : {}),
  };
  return new Promise<Response>((resolve, reject) => {
    const signal = request.signal;
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const outgoing = (secure ? https : http).request(options, (incoming) => {
      try {
        resolve(toResponse(incoming, signal));
      } catch (error) {
        incoming.destroy();
        reject(error);
      }
    });
    const onAbort = (): void => {
      outgoing.destroy(signal.reason instanceof Error ? signal.reason : undefined);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.on("error", (error) => reject(error));
    outgoing.on("close", () => signal.removeEventListener("abort", onAbort));
    outgoing.end();
  });
}

// Response cannot carry a body on these statuses.
const NULL_BODY = new Set([101, 204, 205, 304]);

function toResponse(incoming: IncomingMessage, signal: AbortSignal): Response {
  const status = incoming.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`Unexpected HTTP status ${status}`);
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i], raw[i + 1]);
    } catch {
      // A header value the Fetch API rejects cannot matter to a GET's content.
    }
  }
  if (NULL_BODY.has(status)) {
    incoming.resume();
    return new Response(null, { status, statusText: incoming.statusMessage ?? "", headers });
  }
  let body = bodyStream(incoming, signal);
  const encoding = (headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  // We ask for identity; a server that compresses anyway gets decoded, inside the byte limit.
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate") {
    const format = encoding === "deflate" ? "deflate" : "gzip";
    body = body.pipeThrough(
      new DecompressionStream(format) as ReadableWritablePair<Uint8Array, Uint8Array>,
    );
    headers.delete("content-encoding");
    headers.delete("content-length");
  } else if (encoding !== "identity" && encoding !== "") {
    incoming.destroy();
    throw new Error(`Unsupported content encoding: ${encoding}`);
  }
  return new Response(body, { status, statusText: incoming.statusMessage ?? "", headers });
}

function bodyStream(incoming: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  // Runtimes differ in which events follow a destroy (Bun emits "end" after a
  // cancel); once the stream is settled, later events are ignored.
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const settle = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        if (error === undefined) controller.close();
        else controller.error(error);
      };
      incoming.on("data", (chunk: Uint8Array) => {
        if (settled) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        // Stop the socket when the reader falls behind, so the limit bounds memory too.
        if ((controller.desiredSize ?? 1) <= 0) incoming.pause();
      });
      incoming.on("end", () => settle());
      incoming.on("error", (error) => settle(error));
      incoming.on("aborted", () => settle(new Error("The connection closed early")));
      signal.addEventListener("abort", () => {
        settle(signal.reason);
        incoming.destroy();
      }, { once: true });
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      settled = true;
      incoming.destroy();
    },
  });
}
