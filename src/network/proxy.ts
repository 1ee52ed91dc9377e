// The native tier's way out: an HTTP(S) proxy on a unix socket, run by the host, for one jail.
//
// The jail keeps its empty network namespace (only `lo`); the socket's directory is bound into it, and
// a bridge inside (src/engines/native/bridge.py) relays 127.0.0.1 connections to this socket, with
// HTTP(S)_PROXY pointing there. Every request is decided here by the run's RunNetwork (the same gate
// JavaScript and Pyodide use): allowlist and the run's narrowing, the host's own DNS lookup, no
// private/loopback/link-local/metadata address unless named literally, the connection pinned to the
// checked address, the caps, the methods, the per-entry headers, and the same events.
//
// Two shapes, both parsed by Node's HTTP parser (the guest wrote every byte of them):
// - a forward request with an absolute URI (`GET http://host/path HTTP/1.1`): the gate makes it and
//   the answer is streamed back; redirects come back as they are (the guest's client follows them
//   through the proxy again, so every hop is checked);
// - `CONNECT host:port`, by name (TLS the host does not terminate): the gate checks it and connects,
//   and bytes are relayed; the guest's TLS runs end to end with the real server.
// A refusal is a 403 whose reason phrase and body name the host and why, so `requests`' ProxyError
// (which only shows the status line of a refused CONNECT) and urllib's HTTPError read as the verdict.
//
// Nothing of the host's own proxy settings, cookies or credentials is used: the gate builds every
// request from scratch. A guest that talks to this socket directly instead of through the bridge
// gets exactly the same policy: the bridge is a convenience, this file is the boundary.

import { chmodSync, chownSync } from "node:fs";
import * as http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { NetworkDeniedError } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { EngineName } from "../core/types.ts";
import { printable, type RunNetwork } from "./run-network.ts";
import { emitNoNetwork } from "./open.ts";

/** Headers of the upstream answer that belong to one hop and are not passed on. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "proxy-authenticate",
  "proxy-connection",
  "trailer",
  "upgrade",
]);
/** Connections one jail may hold open on its proxy at once. */
const MAX_CONNECTIONS = 32;

export interface ProxyRun {
  /** The run's gate, or undefined when the run has no network (every request is then refused). */
  network: RunNetwork | undefined;
  engine: EngineName;
  emit?: ((event: EventInput) => void) | undefined;
}

export class NetworkProxy implements AsyncDisposable {
  readonly path: string;
  readonly #server: http.Server;
  readonly #sockets = new Set<Duplex>();
  #run: ProxyRun | undefined;

  private constructor(path: string, server: http.Server) {
    this.path = path;
    this.#server = server;
  }

  /**
   * Listens on `path` (a unix socket). `owner`: the uid/gid the jail runs as, given the socket (mode
   * 0600) so that uid alone may connect; otherwise it stays the host's own (mode 0600).
   */
  static async listen(path: string, owner?: { uid: number; gid: number }): Promise<NetworkProxy> {
    const server = http.createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 0, keepAliveTimeout: 5_000 });
    server.maxHeadersCount = 256;
    server.maxConnections = MAX_CONNECTIONS;
    const proxy = new NetworkProxy(path, server);
    // Every handler settles here: a throw in one (a bug, or an answer Node will not write) becomes a
    // 502 to the jail and an event, never an unhandled rejection that would end the host's process.
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      proxy.#forward(req, res).catch((error: unknown) => {
        proxy.#failed(req.method ?? "", req.url ?? "");
        refuse(res, 502, `network: the proxy could not pass the answer on: ${messageOf(error)}`);
      });
    });
    server.on("connect", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      proxy.#connect(req, socket, head).catch((error: unknown) => {
        proxy.#failed("CONNECT", req.url ?? "");
        refuseTunnel(socket, 502, `network: the proxy could not open the tunnel: ${messageOf(error)}`);
      });
    });
    server.on("connection", (socket: Socket) => {
      proxy.#sockets.add(socket);
      socket.on("close", () => proxy.#sockets.delete(socket));
    });
    server.on("clientError", (_error, socket: Duplex) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
    if (owner) chownSync(path, owner.uid, owner.gid);
    // A parked jail's proxy must not keep the host alive; a run's own work does.
    server.unref();
    return proxy;
  }

  /** The run whose policy decides from now on (a jail serves one run). */
  attach(run: ProxyRun): void {
    this.#run = run;
  }

  /** The run is over: every request and tunnel still open ends now, and later ones are refused. */
  detach(): void {
    this.#run = undefined;
    for (const s of this.#sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.detach();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const run = this.#run;
    const url = req.url ?? "";
    if (!/^https?:\/\//i.test(url)) {
      req.resume();
      refuse(res, 400, `network: the proxy takes absolute http:// URLs (got "${printable(url).slice(0, 80)}")`);
      return;
    }
    if (!run?.network) {
      req.resume();
      this.#noNetwork(run, req.method ?? "");
      refuse(res, 403, "network: this run has no network (the network option)");
      return;
    }
    const network = run.network;
    // Read at most one byte past the cap: the gate then refuses the body by its size.
    let body: Uint8Array | undefined;
    try {
      body = await readBody(req, network.policy.maxRequestBytes + 1);
    } catch {
      res.destroy();
      return;
    }
    const headers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] ?? "";
      // The guest's own proxy headers are for this hop only.
      if (!/^proxy-/i.test(name)) headers.push([name, req.rawHeaders[i + 1] ?? ""]);
    }
    let response;
    try {
      response = await network.fetch({
        url,
        method: req.method ?? "GET",
        headers,
        body: body && body.byteLength > 0 ? body : undefined,
        redirect: "manual",
      });
    } catch (error) {
      refuse(res, statusOf(error), messageOf(error));
      return;
    }
    // The first chunk is read before the head is sent: a cap that fires on it is still a readable 403.
    let first: Uint8Array | null;
    try {
      first = await response.body.read();
    } catch (error) {
      refuse(res, statusOf(error), messageOf(error));
      return;
    }
    res.on("close", () => response.body.cancel());
    // The gate passes final statuses only (200–599); checked again here because writeHead throws on
    // anything under 100 or over 999, and a throw here would otherwise end the host's process.
    if (!Number.isInteger(response.status) || response.status < 200 || response.status > 599) {
      response.body.cancel();
      throw new Error(`the server answered with status ${response.status}, not a final HTTP status (200-599)`);
    }
    const out: Array<[string, string]> = response.headers.filter(([n]) => !HOP_HEADERS.has(n));
    res.writeHead(response.status, printable(response.statusText), out.flat());
    try {
      for (let chunk = first; chunk; chunk = await response.body.read()) {
        if (!res.write(chunk)) await drained(res);
        if (res.destroyed) break;
      }
      res.end();
    } catch {
      // A byte cap or a failure after the head was sent: the only honest signal left is a cut connection.
      res.destroy();
    }
  }

  async #connect(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const run = this.#run;
    const target = parseAuthority(req.url ?? "");
    if (!target) {
      refuseTunnel(socket, 400, `network: CONNECT needs host:port (got "${printable(req.url ?? "").slice(0, 80)}")`);
      return;
    }
    if (!run?.network) {
      this.#noNetwork(run, "CONNECT");
      refuseTunnel(socket, 403, "network: this run has no network (the network option)");
      return;
    }
    try {
      const tunnel = await run.network.connect(target.host, target.port);
      if (socket.destroyed) {
        tunnel.splice(socket, new Uint8Array());
        return;
      }
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      tunnel.splice(socket, head);
    } catch (error) {
      refuseTunnel(socket, statusOf(error), messageOf(error));
    }
  }

  /** A handler that threw: recorded as a refused egress (the jail got a 502 or a cut connection). */
  #failed(method: string, url: string): void {
    const run = this.#run;
    const target = method === "CONNECT" ? parseAuthority(url) : urlTarget(url);
    run?.emit?.({
      type: "egress",
      engine: run.engine,
      method: printable(method, 32),
      host: printable(target?.host ?? "", 256),
      port: target?.port ?? 0,
      allowed: false,
      reason: "response",
      bytesSent: 0,
      bytesReceived: 0,
    });
  }

  #noNetwork(run: ProxyRun | undefined, method: string): void {
    if (run) emitNoNetwork(run.emit, run.engine, method);
  }
}

/** `host:port` of a CONNECT line, the host canonical as a URL gives it (IPv6 without brackets). */
export function parseAuthority(text: string): { host: string; port: number } | undefined {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s/?#@[\]:]+):\d{1,5}$/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(`https://${text}/`);
  } catch {
    return undefined;
  }
  // The default port is dropped by the URL parser.
  const port = url.port === "" ? 443 : Number(url.port);
  if (port < 1 || port > 65535) return undefined;
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port };
}

/** `host` and `port` of a forward request's absolute URL. */
function urlTarget(text: string): { host: string; port: number } | undefined {
  try {
    const url = new URL(text);
    return {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
    };
  } catch {
    return undefined;
  }
}

/**
 * A refusal is a 403, a request that ran out of time a 504, an answer the gate refused or anything
 * else (the server failed) a 502.
 */
function statusOf(error: unknown): number {
  if (!(error instanceof NetworkDeniedError)) return 502;
  return error.reason === "timeout" ? 504 : error.reason === "response" ? 502 : 403;
}

/** Waits for `res` to take more (or to be gone), leaving no listener behind either way. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function refuse(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${message}\n`;
  res.writeHead(status, printable(message), {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body);
}

function refuseTunnel(socket: Duplex, status: number, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${printable(message)}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * The request body, at most `max` bytes. Past that the request stops being read (paused, not
 * destroyed, so the refusal can still be written; `connection: close` ends it after).
 */
function readBody(req: http.IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = () => {
      req.off("data", onData);
      resolve(total === 0 ? undefined : new Uint8Array(Buffer.concat(chunks).subarray(0, max)));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total >= max) {
        req.pause();
        done();
      }
    };
    req.on("data", onData);
    req.once("end", done);
    req.once("error", reject);
  });
}
