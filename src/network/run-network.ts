// The gated fetch: the only way guest code of any tier reaches the network. One RunNetwork per run
// holds the run's policy, counters and deadline. For each request (and again for each redirect hop)
// the host checks the URL against the allowlist, resolves the name *itself*, checks every address,
// and connects to the address it checked (the socket's lookup returns that address: no second DNS
// lookup, so a name cannot rebind between check and connect).
//
// What a guest request never carries: the host's cookies, credentials or proxy settings (a fresh
// agent per request, never the global one or HTTP(S)_PROXY), a Host header of its own choosing, or a
// header the application injects for another entry. Compression is not negotiated (bodies come back
// as the server sent them with no Accept-Encoding), so byte caps count what the guest really gets.

import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import type { Duplex } from "node:stream";
import { GRACE, type Deadline } from "../kit/deadline.ts";
import { NetworkDeniedError } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { EngineName } from "../core/types.ts";
import { checkAddresses, checkTarget, targetName, type NetworkPolicy, type Target } from "./policy.ts";
import {
  CROSS_ORIGIN_DROPPED,
  DROPPED_HEADERS,
  METHOD,
  pairs,
  printable,
  splitTarget,
  systemResolver,
  track,
  type BodyReader,
  type GatedResponse,
  type GuestRequest,
  type Tunnel,
} from "./wire.ts";

export type { BodyReader, GatedResponse, GuestRequest, Tunnel } from "./wire.ts";
export { openSockets, printable } from "./wire.ts";

export interface RunNetworkContext {
  engine: EngineName;
  /**
   * The run's deadline: no request outlives it by more than GRACE.networkMs (past it the engine has
   * already ended the run; the gate stops its requests soon after).
   */
  deadline: Deadline;
  signal?: AbortSignal;
  emit?: ((event: EventInput) => void) | undefined;
}

export class RunNetwork {
  readonly policy: NetworkPolicy;
  readonly #ctx: RunNetworkContext;
  readonly #ended = new AbortController();
  #requests = 0;
  #received = 0;
  readonly #open = new Set<() => void>();

  constructor(policy: NetworkPolicy, ctx: RunNetworkContext) {
    this.policy = policy;
    this.#ctx = ctx;
  }

  /**
   * Ends the run's network: aborts every request still going (its socket is destroyed with it),
   * destroys the socket under every response body and tunnel still open, and refuses any request
   * asked for later. The run's owner calls it when the run settles (src/kit/scope.ts).
   */
  close(): void {
    this.#ended.abort(new Error("the run has ended"));
    for (const finish of [...this.#open]) finish();
  }

  async fetch(request: GuestRequest, signal?: AbortSignal): Promise<GatedResponse> {
    this.#checkOpen();
    const method = (request.method ?? "GET").toUpperCase();
    if (!METHOD.test(method)) throw new TypeError(`network: "${method.slice(0, 40)}" is not an HTTP method`);
    let body = request.body;
    if (body && body.byteLength > this.policy.maxRequestBytes)
      throw this.#deny(
        method,
        undefined,
        new NetworkDeniedError(
          "limit",
          "",
          `network: the request body is ${body.byteLength} bytes, over the ${this.policy.maxRequestBytes}-byte cap (network.maxRequestBytes)`,
        ),
      );
    const guestHeaders = (request.headers ?? []).filter(([n]) => !DROPPED_HEADERS.has(n.toLowerCase()));
    let headers = guestHeaders.map(([n, v]) => [n.toLowerCase(), v] as [string, string]);
    let url = request.url;
    let currentMethod = method;
    let via: string | undefined;
    let origin: string | undefined;
    const timeout = AbortSignal.timeout(this.#timeLeft());
    const signals = [
      this.#ended.signal,
      timeout,
      ...(signal ? [signal] : []),
      ...(this.#ctx.signal ? [this.#ctx.signal] : []),
    ];
    const abort = AbortSignal.any(signals);
    for (let hop = 0; ; hop++) {
      let target: Target;
      try {
        target = checkTarget(this.policy, url, currentMethod, via);
      } catch (error) {
        throw this.#deny(currentMethod, undefined, error);
      }
      if (origin !== undefined && target.url.origin !== origin)
        headers = headers.filter(([n]) => !CROSS_ORIGIN_DROPPED.has(n));
      origin = target.url.origin;
      const name = targetName(target.host, target.port);
      const address = await this.#admit(currentMethod, target, abort);
      const response = await this.#send(target, address, currentMethod, headers, body, abort);
      const location = response.headers.find(([n]) => n === "location")?.[1];
      const redirect = [301, 302, 303, 307, 308].includes(response.status) && location !== undefined;
      if (!redirect || request.redirect === "manual") {
        return { ...response, url: target.url.href, redirected: hop > 0 };
      }
      response.body.cancel();
      if (request.redirect === "error")
        throw new TypeError(`network: ${name} answered with a redirect and the request has redirect: "error"`);
      if (hop >= this.policy.maxRedirects)
        throw this.#deny(
          currentMethod,
          target,
          new NetworkDeniedError(
            "limit",
            name,
            `network: ${name}: more than ${this.policy.maxRedirects} redirects (network.maxRedirects)`,
          ),
        );
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new TypeError(`network: ${name} redirected to a bad URL`);
      }
      if (
        response.status === 303
          ? currentMethod !== "HEAD"
          : [301, 302].includes(response.status) && currentMethod === "POST"
      ) {
        currentMethod = "GET";
        body = undefined;
        headers = headers.filter(([n]) => !n.startsWith("content-"));
      }
      via = name;
      url = next.href;
    }
  }

  /**
   * A TCP tunnel to `host:port` (an HTTP proxy's CONNECT, for TLS the host does not terminate): the
   * same allowlist, DNS, address and request-count checks as a request, then a socket connected to
   * the checked address. Inside the tunnel the host sees only bytes, so it counts what comes back
   * against maxResponseBytes (for the whole tunnel) and maxTotalBytes, and ends the tunnel at
   * timeoutMs or the run's deadline. Refused outright when network.methods is set: the method of a
   * request inside TLS cannot be seen, so the rule could not hold. Per-entry headers cannot be
   * injected into TLS either; a tunnel simply goes without them.
   */
  async connect(host: string, port: number): Promise<Tunnel> {
    this.#checkOpen();
    const method = "CONNECT";
    const name = targetName(host, port);
    let target: Target;
    try {
      if (this.policy.methods)
        throw new NetworkDeniedError(
          "method",
          name,
          `network: CONNECT ${name} refused: network.methods is set, and the method of a request inside a TLS tunnel cannot be checked`,
        );
      target = checkTarget(this.policy, `https://${host.includes(":") ? `[${host}]` : host}:${port}/`, method);
    } catch (error) {
      throw this.#deny(method, undefined, error);
    }
    const abort = AbortSignal.any([
      this.#ended.signal,
      AbortSignal.timeout(this.#timeLeft()),
      ...(this.#ctx.signal ? [this.#ctx.signal] : []),
    ]);
    const address = await this.#admit(method, target, abort);
    const event = { engine: this.#ctx.engine, method, host: target.host, port: target.port, address };
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: address, port: target.port, signal: abort });
      track(s);
      let connected = false;
      s.once("connect", () => {
        connected = true;
        resolve(s);
      });
      // Stays attached for the socket's life: an error between connect and splice must not go unhandled.
      s.on("error", (error) => {
        if (connected) return;
        this.#ctx.emit?.({ type: "egress", ...event, allowed: true, bytesSent: 0, bytesReceived: 0 });
        reject(
          abort.aborted
            ? this.#abortError(abort, name)
            : new TypeError(`network: CONNECT ${name} failed: ${error.message}`),
        );
      });
    });
    let sent = 0;
    let received = 0;
    let finished = false;
    let client: Duplex | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#open.delete(finish);
      socket.destroy();
      client?.destroy();
      this.#ctx.emit?.({ type: "egress", ...event, allowed: true, bytesSent: sent, bytesReceived: received });
    };
    this.#open.add(finish);
    socket.on("close", finish);
    socket.on("error", finish);
    // The timeout, the run's end or the caller's signal: the abort ends both sides.
    abort.addEventListener(
      "abort",
      () => {
        if (!finished) this.#abortError(abort, name); // emits the timeout limit when that is the reason
        finish();
      },
      { once: true },
    );
    return {
      address,
      splice: (peer: Duplex, head: Uint8Array) => {
        client = peer;
        peer.on("close", finish);
        peer.on("error", finish);
        const up = (chunk: Uint8Array) => {
          sent += chunk.byteLength;
          if (!socket.write(chunk)) {
            peer.pause();
            socket.once("drain", () => peer.resume());
          }
        };
        if (head.byteLength > 0) up(head);
        peer.on("data", up);
        peer.on("end", () => socket.end());
        socket.on("end", () => peer.end());
        socket.on("data", (chunk: Buffer) => {
          received += chunk.byteLength;
          this.#received += chunk.byteLength;
          if (received > this.policy.maxResponseBytes || this.#received > this.policy.maxTotalBytes) {
            // Nothing past the cap reaches the guest: the tunnel ends before this chunk is passed on.
            const perTunnel = received > this.policy.maxResponseBytes;
            const cap = perTunnel ? "maxResponseBytes" : "maxTotalBytes";
            const value = perTunnel ? this.policy.maxResponseBytes : this.policy.maxTotalBytes;
            this.#ctx.emit?.({ type: "limit", engine: this.#ctx.engine, limit: `network.${cap}`, value });
            finish();
            return;
          }
          if (!peer.write(chunk)) {
            socket.pause();
            peer.once("drain", () => socket.resume());
          }
        });
      },
    };
  }

  /** Reads a whole response (the Python bridge's shape). */
  async fetchAll(
    request: GuestRequest,
    signal?: AbortSignal,
  ): Promise<Omit<GatedResponse, "body"> & { body: Uint8Array }> {
    const response = await this.fetch(request, signal);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (let chunk = await response.body.read(); chunk; chunk = await response.body.read()) {
      chunks.push(chunk);
      total += chunk.byteLength;
    }
    const body = new Uint8Array(total);
    let offset = 0;
    for (const c of chunks) {
      body.set(c, offset);
      offset += c.byteLength;
    }
    return { ...response, body };
  }

  /** A late call (a host call that arrived as the run ended) opens nothing. */
  #checkOpen(): void {
    if (this.#ended.signal.aborted) throw new Error("network: the run has ended");
  }

  /** Milliseconds a request (or tunnel) starting now may take: timeoutMs, inside the run's deadline. */
  #timeLeft(): number {
    // The engine's own deadline ends the run first (kind `timeout`); this bounds the request itself.
    return Math.max(
      1,
      Math.ceil(Math.min(this.policy.timeoutMs, this.#ctx.deadline.at + GRACE.networkMs - performance.now())),
    );
  }

  /** Counts the request against maxRequests, resolves and checks: the address to connect to. */
  async #admit(method: string, target: Target, abort: AbortSignal): Promise<string> {
    const name = targetName(target.host, target.port);
    if (this.#requests >= this.policy.maxRequests)
      throw this.#deny(
        method,
        target,
        new NetworkDeniedError(
          "limit",
          name,
          `network: ${name} refused: this run may make ${this.policy.maxRequests} requests (network.maxRequests)`,
        ),
      );
    this.#requests++;
    try {
      const addresses = target.rule.kind === "address" ? [] : await this.#resolve(target.host, abort);
      return checkAddresses(target, addresses).address;
    } catch (error) {
      throw this.#deny(method, target, error, abort);
    }
  }

  async #resolve(host: string, signal: AbortSignal): Promise<string[]> {
    const resolve = this.policy.resolve ?? systemResolver;
    const lookup = resolve(host);
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error("aborted"));
      if (signal.aborted) fail();
      signal.addEventListener("abort", fail, { once: true });
    });
    lookup.catch(() => undefined);
    aborted.catch(() => undefined);
    try {
      const result = await Promise.race([lookup, aborted]);
      if (!Array.isArray(result) || !result.every((a) => typeof a === "string")) return [];
      return result.slice(0, 64);
    } catch (error) {
      if (signal.aborted) throw this.#abortError(signal, targetName(host, 0));
      throw new NetworkDeniedError(
        "dns",
        host,
        `network: ${host} refused: the name does not resolve (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  #send(
    target: Target,
    address: string,
    method: string,
    guestHeaders: ReadonlyArray<readonly [string, string]>,
    body: Uint8Array | undefined,
    signal: AbortSignal,
  ): Promise<Omit<GatedResponse, "url" | "redirected">> {
    const name = targetName(target.host, target.port);
    const family = address.includes(":") ? 6 : 4;
    const injected = new Set(target.rule.headers.map(([n]) => n));
    // Same-name headers are joined with ", " (the Fetch standard's combined value).
    const outgoing: Record<string, string> = {};
    for (const [n, v] of [...guestHeaders.filter(([n]) => !injected.has(n)), ...target.rule.headers])
      outgoing[n] = n in outgoing ? `${outgoing[n]}, ${v}` : v;
    const https_ = target.url.protocol === "https:";
    const mod = https_ ? https : http;
    const event = { engine: this.#ctx.engine, method, host: target.host, port: target.port, address };
    return new Promise((resolve, reject) => {
      // Ended while the name resolved (the run settled, the caller aborted): no socket is opened.
      if (signal.aborted) {
        reject(this.#abortError(signal, name));
        return;
      }
      // Settles exactly once, whatever comes first: an answer, an error, the connection closing with
      // no answer (Node then emits neither), an upgrade, or the abort (which Node does not turn into
      // an error once the socket is gone). A throw in here would reach no caller, so nothing throws.
      let settled = false;
      const fail = (failure: Error, refused?: { status: number }) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        req.destroy();
        this.#ctx.emit?.({
          type: "egress",
          ...event,
          allowed: refused === undefined,
          ...(refused ? { reason: "response" as const, status: refused.status } : {}),
          bytesSent: body?.byteLength ?? 0,
          bytesReceived: 0,
        });
        reject(failure);
      };
      const onAbort = () => fail(this.#abortError(signal, name));
      const req = mod.request({
        host: target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method,
        headers: outgoing,
        // A fresh agent: no pooled sockets from other runs, and never the global agent (which may be
        // set up for the host's proxy from the environment).
        agent: new mod.Agent({ keepAlive: false }),
        // Pin the connection to the checked address: this lookup is the only one the socket makes.
        lookup: ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (options.all) cb(null, [{ address, family }]);
          else cb(null, address, family);
        }) as never,
        ...(https_ && !target.url.hostname.startsWith("[") && target.rule.kind !== "address"
          ? { servername: target.host }
          : {}),
        signal,
      });
      req.on("socket", track);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      req.on("error", (error) => {
        // After the answer came, the body's reader reports the failure (and #abortError emits the
        // limit it was): computing it here too would count one timeout twice.
        if (settled) return;
        fail(
          signal.aborted
            ? this.#abortError(signal, name)
            : new TypeError(`network: ${method} ${name} failed: ${error.message}`),
        );
      });
      req.on("close", () =>
        fail(new TypeError(`network: ${method} ${name} failed: the connection closed with no answer`)),
      );
      // 101 Switching Protocols: the connection would stop being HTTP, out of reach of every cap.
      req.on("upgrade", (res: http.IncomingMessage, socket: Duplex) => {
        socket.destroy();
        const to = printable(res.headers.upgrade ?? "", 40);
        fail(
          new NetworkDeniedError(
            "response",
            name,
            `network: ${name} answered 101 Switching Protocols (an upgrade to "${to}"): refused, the gate relays HTTP requests only`,
          ),
          { status: 101 },
        );
      });
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        // Node passes on any three digits, and 101 without an Upgrade header; a Response (and the
        // native proxy's writeHead) takes 200–599 only. Informational 1xx never get here.
        if (!Number.isInteger(status) || status < 200 || status > 599) {
          res.destroy();
          fail(
            new NetworkDeniedError(
              "response",
              name,
              `network: ${name} answered with status ${status}, not a final HTTP status (200-599): refused`,
            ),
            { status },
          );
          return;
        }
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve({
          status,
          statusText: (res.statusMessage ?? "").slice(0, 200),
          headers: pairs(res.rawHeaders),
          body: this.#reader(res, name, signal, (received) =>
            this.#ctx.emit?.({
              type: "egress",
              ...event,
              allowed: true,
              status,
              bytesSent: body?.byteLength ?? 0,
              bytesReceived: received,
            }),
          ),
        });
      });
      req.end(body);
    });
  }

  #reader(res: http.IncomingMessage, name: string, signal: AbortSignal, done: (bytes: number) => void): BodyReader {
    let received = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#open.delete(finish);
      signal.removeEventListener("abort", finish);
      res.destroy();
      done(received);
    };
    this.#open.add(finish);
    // The abort ends the body itself: a read waiting on a server that trickles then rejects.
    signal.addEventListener("abort", finish, { once: true });
    const iterator = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    return {
      read: async () => {
        // A body cut by the abort (timeout, the caller, the run's end) is an error, never a short end.
        if (finished) {
          if (signal.aborted) throw this.#abortError(signal, name);
          return null;
        }
        let step: IteratorResult<Buffer>;
        try {
          step = await iterator.next();
        } catch (error) {
          finish();
          if (signal.aborted) throw this.#abortError(signal, name);
          throw new TypeError(`network: reading the response from ${name} failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        // Destroyed by the abort, a body without a length ends as if complete: it is not.
        if (signal.aborted) {
          finish();
          throw this.#abortError(signal, name);
        }
        if (step.done) {
          finish();
          return null;
        }
        const chunk = new Uint8Array(step.value.buffer, step.value.byteOffset, step.value.byteLength);
        received += chunk.byteLength;
        this.#received += chunk.byteLength;
        if (received > this.policy.maxResponseBytes || this.#received > this.policy.maxTotalBytes) {
          finish();
          const perResponse = received > this.policy.maxResponseBytes;
          const cap = perResponse ? "maxResponseBytes" : "maxTotalBytes";
          const value = perResponse ? this.policy.maxResponseBytes : this.policy.maxTotalBytes;
          this.#ctx.emit?.({ type: "limit", engine: this.#ctx.engine, limit: `network.${cap}`, value });
          throw new NetworkDeniedError(
            "limit",
            name,
            `network: the response from ${name} is over the ${value}-byte cap (network.${cap})`,
          );
        }
        return chunk;
      },
      cancel: finish,
    };
  }

  #abortError(signal: AbortSignal, name: string): Error {
    if (this.#ctx.signal?.aborted || this.#ended.signal.aborted) return new Error("network: the run has ended");
    const reason: unknown = signal.reason;
    if (reason instanceof DOMException && reason.name === "TimeoutError") {
      this.#ctx.emit?.({
        type: "limit",
        engine: this.#ctx.engine,
        limit: "network.timeoutMs",
        value: this.policy.timeoutMs,
      });
      return new NetworkDeniedError(
        "timeout",
        name,
        `network: ${name} did not answer in time (network.timeoutMs or the run's deadline)`,
      );
    }
    const error = new Error(`network: the request to ${name} was aborted`);
    error.name = "AbortError";
    return error;
  }

  /** Records a refusal and returns the error to throw. */
  #deny(method: string, target: Target | undefined, error: unknown, signal?: AbortSignal): unknown {
    if (signal?.aborted) return error;
    if (error instanceof NetworkDeniedError) {
      const [host, port] = target ? [target.host, target.port] : splitTarget(error.target);
      this.#ctx.emit?.({
        type: "egress",
        engine: this.#ctx.engine,
        method,
        host,
        port,
        allowed: false,
        reason: error.reason,
        bytesSent: 0,
        bytesReceived: 0,
      });
      if (error.reason === "limit" && error.message.includes("network.maxRequests"))
        this.#ctx.emit?.({
          type: "limit",
          engine: this.#ctx.engine,
          limit: "network.maxRequests",
          value: this.policy.maxRequests,
        });
    }
    return error;
  }
}
