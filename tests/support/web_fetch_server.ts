/**
 * A loopback web server for the web_fetch tests. It listens on 127.0.0.1
 * only and counts every request, so an SSRF test can assert that nothing
 * reached it. Routes:
 *   /text /json /html          small bodies of each type
 *   /redirect?to=URL           302 to URL
 *   /endless                   text that never ends (records when the client hangs up)
 *   /stall                     headers, then nothing (records when the client hangs up)
 *   /gzip                      gzip-compressed text, sent although identity was asked
 *   /echo                      the request's method, Host header and URL as JSON
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";

/** The test certificate (CN and SAN example.test), also its own CA. */
export const TEST_CERT: string = readFileSync(
  new URL("./web_fetch_tls/test_cert.pem", import.meta.url),
  "utf8",
);
const TEST_KEY = readFileSync(new URL("./web_fetch_tls/test_key.pem", import.meta.url), "utf8");

/** A running loopback server. */
export interface LoopbackServer {
  /** The port on 127.0.0.1. */
  port: number;
  /** Every request's path, in order. */
  hits: string[];
  /** Paths whose client closed the connection before the response ended. */
  hangups: string[];
  /** The Host header and TLS server name of each request. */
  seen: { host?: string; servername?: string }[];
  close(): Promise<void>;
}

/** The page every HTML test expects, and its Markdown landmarks. */
export const HTML_PAGE =
  "<!doctype html><html><head><title>Floret</title><style>p{color:red}</style>" +
  "<script>alert('x')</script></head><body><h1>Web fetch works</h1>" +
  '<p>Some <strong>bold</strong> text and a <a href="https://example.org/">link</a>.</p>' +
  "<ul><li>first</li><li>second</li></ul></body></html>";

function handle(server: LoopbackServer, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://loopback");
  server.hits.push(url.pathname);
  server.seen.push({
    host: req.headers.host,
    servername: (req.socket as { servername?: string }).servername,
  });
  res.on("close", () => {
    if (!res.writableFinished) server.hangups.push(url.pathname);
  });
  switch (url.pathname) {
    case "/text":
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(
        "plain loopback text",
      );
      return;
    case "/json":
      res.writeHead(200, { "content-type": "application/json" }).end('{"a":1,"b":[true,null]}');
      return;
    case "/html":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HTML_PAGE);
      return;
    case "/redirect":
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/text" }).end();
      return;
    case "/gzip":
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        .end(gzipSync("compressed loopback text"));
      return;
    case "/echo":
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ method: req.method, host: req.headers.host, url: req.url }),
      );
      return;
    case "/endless": {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(16 * 1024);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
      return;
    }
    case "/stall":
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("a first line\n");
      return;
    default:
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  }
}

/**
 * Starts the server on 127.0.0.1 on a free port.
 *
 * @param tls serve HTTPS with the test certificate
 */
export async function startLoopbackServer(tls = false): Promise<LoopbackServer> {
  const state: LoopbackServer = {
    port: 0,
    hits: [],
    hangups: [],
    seen: [],
    close: () => Promise.resolve(),
  };
  const listener = (req: IncomingMessage, res: ServerResponse): void => handle(state, req, res);
  const server: Server = tls
    ? createHttpsServer({ key: TEST_KEY, cert: TEST_CERT }, listener)
    : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => resolve());
    });
  return state;
}
