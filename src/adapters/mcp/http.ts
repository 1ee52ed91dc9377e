// The MCP server over Streamable HTTP, built to be shared: admission with honest refusals (see
// admission.ts, sessions.ts), a stateless mode for running replicas behind any load balancer, a bearer
// token for non-loopback binds (guard.ts), /healthz, /readyz and Prometheus /metrics, and a drain that
// finishes in-flight calls before the process exits.
//
// Stateful (default): each client's initialize opens a session (Mcp-Session-Id) that lives in this
// process; behind a balancer that needs sticky routing on that header, and `session: true` interpreters
// need it too. Stateless: every POST gets a fresh MCP server and transport and no session id, so any
// replica answers any request; the server is cheap because what does not depend on the client (the
// tool's schema and description, the SDK's validator) is built once in serveHttp. A stateless call
// that asked for progress streams as SSE; one that did not gets a plain JSON response, so a replica
// that dies mid-call fails the request at once (the client retries elsewhere) instead of leaving an
// event stream the client would wait on until its timeout.

import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InvalidOptionError } from "../../core/errors.ts";
import { DEFAULT_MCP_HTTP } from "./defaults.ts";
import type { Sandbox } from "../../sandbox.ts";
import { Admission, FairQueue, type Refusal } from "./admission.ts";
import { BodyError, readJson, settleBody } from "./body.ts";
import { checkBind, checkRequest, isLoopbackHost } from "./guard.ts";
import { Metrics } from "./metrics.ts";
import { mcpServerFactory, type CallGate } from "./server.ts";
import type { RunCodeToolOptions } from "../tools/run-code.ts";
import { SessionTable } from "./sessions.ts";
import type { EventTap } from "./events.ts";
import type { SessionStore } from "../../stores/store.ts";
import { checkStoreKey, StoredSessions } from "./stored-sessions.ts";
import { SessionIds } from "./session-ids.ts";

/** A stored session in the sessions table: its state is in the store, so there is nothing to close. */
const IN_STORE = { close: () => Promise.resolve() };

/**
 * `createMcpServer`'s options without its `gate`: the HTTP server puts every call through its own
 * admission and fair queue, so a gate given here would be ignored; it is refused instead.
 */
export interface HttpServeOptions extends RunCodeToolOptions {
  /** TCP port; 0 picks a free one (the URL in the result says which). @defaultValue 0 */
  port?: number;
  /** Address to bind. Anything but loopback needs `token`. @defaultValue "127.0.0.1" */
  host?: string;
  /** Bearer token every /mcp and /metrics request must carry (at least 16 characters). @defaultValue none */
  token?: string;
  /** Largest request body accepted, in bytes. @defaultValue twice the code cap plus 1 MiB */
  maxBodyBytes?: number;
  /** No session ids: any process answers any request (replicas behind a balancer). @defaultValue false */
  stateless?: boolean;
  /** Open sessions at once (stateful mode); past it initialize gets 503. @defaultValue 128 */
  maxSessions?: number;
  /** A session with no request for this long is closed. @defaultValue 600000 (10 minutes) */
  sessionTtlMs?: number;
  /** Tool calls in flight (queued or running) across all clients. @defaultValue 256 */
  maxInflight?: number;
  /** Tool calls in flight for one client (a session; stateless: a source address). @defaultValue 16 */
  maxInflightPerClient?: number;
  /**
   * Keep `session: true` sessions in this store between calls instead of in this process: a
   * DiskSessionStore lets them survive a restart, a RedisSessionStore lets any replica serve them
   * (docs/server.md, "Sessions across restarts and replicas"). The MCP session id is then the durable
   * key: any process with the store accepts it. Needs `session: true`, and the sandbox's `sessions.key`
   * shared by every process that reads the store. @defaultValue none (sessions live in this process)
   */
  sessionStore?: SessionStore;
  /** Stored sessions: a session lock's lease, renewed while a call runs. @defaultValue 10000 */
  sessionLeaseMs?: number;
  /** Stored sessions: how long a call waits for a session another call holds, then gets "busy". @defaultValue 30000 */
  sessionWaitMs?: number;
  /**
   * Stored sessions: the most bytes one MCP session's records may take in the store (each language it
   * ran and each fork it made); a call whose state would pass it is refused and not kept. Size a store
   * with a budget (DiskSessionStore's `maxBytes`) at `maxSessions` × this, and no session pushes out
   * another's. @defaultValue 268435456 (256 MiB)
   */
  sessionQuotaBytes?: number;
  /** Stateless mode: tell clients apart by the last X-Forwarded-For hop (set by a balancer you run). @defaultValue false */
  trustProxy?: boolean;
  /** Calls handed to the sandbox at once per engine lane. @defaultValue javascript: one per thread the JS pool may grow to (`javascript.maxWorkers`; 1 on the host's thread); python: `python.pool` */
  concurrency?: { javascript?: number; python?: number };
  /**
   * The tap given to the sandbox as `onEvent` (`onEvent: tap.listener`): /metrics counts engine
   * restarts from its `restart` events. @defaultValue none (the restart counter stays 0)
   */
  events?: EventTap;
}

export interface HttpMcpServer extends AsyncDisposable {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** Resolves once the engines are warm (when /readyz starts answering 200). */
  readonly ready: Promise<void>;
  /**
   * Stops accepting (new connections refused, new requests 503, /readyz 503), lets in-flight calls
   * finish for up to `graceMs`, then closes. Resolves with the calls in flight when it began (`waited`)
   * and those still running at the end of the grace, which the close cut (`cut`).
   */
  drain(graceMs: number): Promise<{ waited: number; cut: number }>;
  /** Closes at once: in-flight calls are cut. */
  close(): Promise<void>;
}

/** Serves MCP over Streamable HTTP at `/mcp`, with /healthz, /readyz and /metrics beside it. */
export async function serveHttp(options: HttpServeOptions): Promise<HttpMcpServer> {
  if ((options as { gate?: unknown }).gate !== undefined)
    throw new InvalidOptionError(
      "gate",
      "serveHttp queues every call through its own admission (maxInflight, maxInflightPerClient); a gate is for createMcpServer",
    );
  const o = { ...DEFAULT_MCP_HTTP, ...stripUndefined(options) };
  const tokenDigest = checkBind(o.host, o.token);
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
    throw new InvalidOptionError("port", "must be an integer from 0 to 65535");
  for (const field of [
    "maxSessions",
    "sessionTtlMs",
    "maxInflight",
    "maxInflightPerClient",
    "sessionLeaseMs",
    "sessionWaitMs",
    "sessionQuotaBytes",
  ] as const) {
    if (!Number.isSafeInteger(o[field]) || o[field] < 1)
      throw new InvalidOptionError(field, "must be a positive integer");
  }
  if (o.stateless && o.session && !o.sessionStore)
    throw new InvalidOptionError(
      "stateless",
      "session interpreters live in one process, so they cannot be stateless: give a sessionStore (any replica then serves any session), or run them stateful with sticky routing on Mcp-Session-Id",
    );
  const stored = o.sessionStore ? storedSessions(o, o.sessionStore) : undefined;
  // Built once per deployment, not per request: the tool's schema, description and the SDK's validator
  // cost more than the rest of a stateless request's server; each request adds only its gate and transport.
  const newServer = mcpServerFactory(stored ? { ...o, stored } : o);
  const loopback = isLoopbackHost(o.host);
  const maxBody = o.maxBodyBytes ?? o.sandbox.options.limits.maxCodeBytes * 2 + (1 << 20);
  const reply = (res: ServerResponse, status: number, message: string, ...rest: ReplyExtras) =>
    answer(res, maxBody, status, message, ...rest);
  const lanes = {
    javascript: new FairQueue(o.concurrency?.javascript ?? javascriptSlots(o.sandbox.options)),
    python: new FairQueue(o.concurrency?.python ?? o.sandbox.options.python.pool),
  };
  const admission = new Admission(o);
  const sessions = new SessionTable(o.maxSessions, o.sessionTtlMs);
  const metrics = new Metrics();
  const unsubscribe = o.events?.subscribe((event) => {
    if (event.type === "restart") metrics.restarts++;
  });
  let draining = false;
  let ready = false;

  const gateFor = (client: string): CallGate => ({
    run: (lane, call, signal) => lanes[lane === "python" ? "python" : "javascript"].run(client, call, signal),
    finished: (language, outcome, seconds) => metrics.call(language, outcome, seconds),
  });

  const refuse = (res: ServerResponse, refusal: Refusal, id: unknown = null) => {
    metrics.refused(refusal.reason);
    const data = { reason: refusal.reason, retryAfterSeconds: refusal.retryAfterSeconds };
    reply(res, 503, refusal.message, id, { "retry-after": String(refusal.retryAfterSeconds) }, data);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === "/healthz") return text(res, draining ? 503 : 200, draining ? "draining\n" : "ok\n");
    if (path === "/readyz")
      return text(res, ready && !draining ? 200 : 503, draining ? "draining\n" : ready ? "ready\n" : "warming\n");
    if (path !== "/mcp" && path !== "/metrics") return reply(res, 404, "not found: the MCP endpoint is /mcp");
    const denied = checkRequest(req, { loopback, tokenDigest });
    if (denied) {
      const headers = denied.status === 401 ? { "www-authenticate": 'Bearer realm="wasmcell"' } : {};
      return reply(res, denied.status, denied.message, null, headers);
    }
    if (path === "/metrics") {
      const gauges = {
        sessions: stored ? stored.size : sessions.size,
        inflight: admission.inflight,
        queued: lanes.javascript.depth + lanes.python.depth,
        running: lanes.javascript.running + lanes.python.running,
        draining,
      };
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      return void res.end(metrics.render(gauges, sessions.expired));
    }
    if (draining) {
      return refuse(res, { reason: "draining", message: "the server is shutting down; retry", retryAfterSeconds: 1 });
    }
    if (o.stateless) return handleStateless(req, res);
    if (stored) return handleStored(req, res, stored);
    return handleStateful(req, res);
  }

  /** Reads the body (POST only) and reserves in-flight places for the tool calls in it. */
  async function admit(
    req: IncomingMessage,
    res: ServerResponse,
    client: (body: unknown) => string,
  ): Promise<{ body: unknown; release: () => void } | undefined> {
    if (req.method !== "POST") return { body: undefined, release: () => undefined };
    const body = await readJson(req, maxBody);
    if (body instanceof BodyError) return void reply(res, body.status, body.message);
    const calls = (Array.isArray(body) ? body : [body]).filter(isToolCall);
    if (calls.length === 0) return { body, release: () => undefined };
    const ticket = admission.admit(client(body), calls.length);
    if ("reason" in ticket) return void refuse(res, ticket, (calls[0] as { id?: unknown }).id ?? null);
    res.once("close", ticket.release);
    return { body, release: ticket.release };
  }

  async function handleStateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST", "content-type": "application/json" });
      return void res.end(rpcError("stateless server: only POST is served (no event stream, no sessions)"));
    }
    const client = clientAddress(req, o.trustProxy);
    const admitted = await admit(req, res, () => client);
    if (!admitted) return;
    const wantsStream = (Array.isArray(admitted.body) ? admitted.body : [admitted.body]).some(hasProgressToken);
    const server = newServer(gateFor(client));
    const transport = new StreamableHTTPServerTransport({
      // No sessionIdGenerator: the SDK's stateless mode (no Mcp-Session-Id, no session validation).
      enableJsonResponse: !wantsStream,
    });
    res.once("close", () => void server.close().catch(() => undefined));
    await server.connect(transport);
    await transport.handleRequest(req, res, admitted.body);
  }

  /**
   * Stored sessions: the session id is ours, not the SDK's. Initialize mints one (session-ids.ts: the
   * form of a UUID, authenticated under the sessions key, in the Mcp-Session-Id response header) and
   * counts it against `maxSessions` here; every later request carries it and is served by a fresh
   * server and an SDK transport in its stateless mode, on whichever process receives it, because the
   * session's state is in the store, not here. An id no server of this deployment minted is an unknown
   * session (404): a client cannot make one up to get past the per-client cap or `maxSessions`. A
   * minted id that reaches this process is counted here while it is in use. DELETE removes the
   * session's records and its forks'; there is no GET event stream (405, as the specification allows),
   * so a dead process leaves no stream for a client to wait on.
   */
  async function handleStored(req: IncomingMessage, res: ServerResponse, stored: StoredSessions): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const given = Array.isArray(header) ? header[0] : header;
    if (given !== undefined && !stored.ids.isSession(given))
      return reply(res, 404, "unknown MCP session (not an id this server issued): initialize a new one");
    if (req.method === "DELETE") {
      if (given === undefined) return reply(res, 400, "DELETE needs the Mcp-Session-Id of the session to end");
      sessions.delete(given);
      await stored.forget(given);
      return void res.writeHead(200).end();
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST, DELETE", "content-type": "application/json" });
      return void res.end(rpcError("this server keeps sessions in a store: POST and DELETE only, no event stream"));
    }
    if (given !== undefined) {
      const end = sessions.begin(given) ?? (sessions.add(given, IN_STORE), sessions.begin(given));
      if (end) res.once("close", end);
    }
    const admitted = await admit(req, res, () => given ?? clientAddress(req, o.trustProxy));
    if (!admitted) return;
    const messages = Array.isArray(admitted.body) ? admitted.body : [admitted.body];
    let id = given;
    if (id === undefined) {
      const init = messages.find((m) => isInitializeRequest(m)) as { id?: unknown } | undefined;
      if (!init) return reply(res, 400, "no MCP session: send an initialize request first");
      const room = sessions.reserve();
      if ("retryAfterSeconds" in room) return refuse(res, maxSessionsRefusal(room.retryAfterSeconds), init.id ?? null);
      id = stored.ids.session();
      sessions.add(id, IN_STORE);
      room.done();
      // Set before the SDK writes its head: Node merges it into the headers the transport sends.
      res.setHeader("mcp-session-id", id);
    }
    const server = newServer(gateFor(id), id);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: !messages.some(hasProgressToken) });
    res.once("close", () => void server.close().catch(() => undefined));
    await server.connect(transport);
    await transport.handleRequest(req, res, admitted.body);
  }

  async function handleStateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const end = sessions.begin(sessionId);
      if (!end) return reply(res, 404, "unknown or expired MCP session: initialize a new one");
      // A GET is the client's event stream, open for as long as it is connected: not "in use".
      if (req.method === "GET") end();
      else res.once("close", end);
      const admitted = await admit(req, res, () => sessionId);
      if (!admitted) return;
      const transport = transports.get(sessionId);
      // Closed while its body was read (a DELETE, the server closing): the same answer as unknown.
      if (!transport) return reply(res, 404, "unknown or expired MCP session: initialize a new one");
      return transport.handleRequest(req, res, admitted.body);
    }
    if (req.method !== "POST") return reply(res, 400, "no MCP session: send an initialize request first");
    const body = await readJson(req, maxBody);
    if (body instanceof BodyError) return reply(res, body.status, body.message);
    if (!isInitializeRequest(body)) return reply(res, 400, "no MCP session: send an initialize request first");
    const room = sessions.reserve();
    if ("retryAfterSeconds" in room) {
      return refuse(res, maxSessionsRefusal(room.retryAfterSeconds), (body as { id?: unknown }).id ?? null);
    }
    try {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          transports.set(sid, transport);
          sessions.add(sid, { close: () => transport.close() });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) {
          transports.delete(transport.sessionId);
          sessions.delete(transport.sessionId);
        }
      };
      const id = randomUUID();
      const server = newServer(gateFor(id));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      room.done();
    }
  }
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const maxSessionsRefusal = (retryAfterSeconds: number): Refusal => ({
    reason: "max-sessions",
    message: `the server has ${o.maxSessions} open sessions (--max-sessions); none is idle past its TTL yet`,
    retryAfterSeconds,
  });

  const http = createServer((req, res) => {
    if (draining) res.setHeader("connection", "close");
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        reply(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(o.port, o.host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  // Warm the JavaScript engine (and Python, if the sandbox prewarms it) before /readyz says so.
  const warm = (async () => {
    await o.sandbox.run({ language: "javascript", code: "1" });
    await o.sandbox.warm();
    ready = true;
  })();
  warm.catch(() => undefined);

  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      draining = true;
      unsubscribe?.();
      await sessions.closeAll();
      await stored?.close();
      transports.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    })());
  const drain = async (graceMs: number) => {
    draining = true;
    const waited = admission.inflight;
    http.close();
    http.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    while (admission.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const cut = admission.inflight;
    await close();
    return { waited, cut };
  };
  const shownHost = o.host.includes(":") ? `[${o.host}]` : o.host;
  return { url: `http://${shownHost}:${port}/mcp`, ready: warm, drain, close, [Symbol.asyncDispose]: close };
}

/** The stored-sessions table for serveHttp's options, after checking they fit together. */
function storedSessions(
  o: HttpServeOptions & {
    sessionLeaseMs: number;
    sessionWaitMs: number;
    maxSessions: number;
    sessionTtlMs: number;
    sessionQuotaBytes: number;
  },
  store: SessionStore,
): StoredSessions {
  if (!o.session) throw new InvalidOptionError("sessionStore", "stores stateful sessions, so it needs session: true");
  if (o.stateless)
    throw new InvalidOptionError(
      "stateless",
      "with a sessionStore any process already answers any request of a session; leave stateless off",
    );
  checkStoreKey(o.sandbox, store);
  return new StoredSessions({
    ids: new SessionIds(o.sandbox.options.sessions.key),
    quotaBytes: o.sessionQuotaBytes,
    sandbox: o.sandbox,
    store,
    pythonEngine: o.pythonEngine ?? o.sandbox.options.python.engine,
    leaseMs: o.sessionLeaseMs,
    waitMs: o.sessionWaitMs,
    maxLive: o.maxSessions,
    idleMs: o.sessionTtlMs,
  });
}

/**
 * How many JavaScript calls to hand the sandbox at once: one per worker thread the pool may grow to
 * (`javascript.maxWorkers`) when guest JavaScript runs in a thread pool, else one. A thread holds the
 * runs it has started while a CPU loop spins on it, and their deadlines keep counting; the pool sends
 * new runs to threads that are not stalled and grows overflow threads for them, so one call per thread
 * keeps a benign call from being started beside a hostile one. On the host's own thread there is one.
 * Waiting in the fair queue costs a call nothing.
 */
function javascriptSlots(options: Sandbox["options"]): number {
  const js = (
    options as { javascript?: { isolation?: string; workers?: number; maxWorkers?: number; runsPerWorker?: number } }
  ).javascript;
  if (js?.isolation !== "thread") return 1;
  return (js.maxWorkers ?? js.workers ?? 1) * (js.runsPerWorker ?? 1) + ((js as { maxParked?: number }).maxParked ?? 0);
}

function isToolCall(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === "tools/call";
}

function hasProgressToken(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
  return meta?.progressToken !== undefined;
}

function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers["x-forwarded-for"] : undefined;
  const last = (Array.isArray(forwarded) ? forwarded.at(-1) : forwarded)?.split(",").at(-1)?.trim();
  return last || (req.socket.remoteAddress ?? "unknown");
}

type ReplyExtras = [id?: unknown, headers?: Record<string, string>, data?: unknown];

function rpcError(message: string, id: unknown = null, data?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message, ...(data ? { data } : {}) }, id });
}

/** Writes a JSON-RPC error answer once the request's body is read (see body.ts for why). */
function answer(
  res: ServerResponse,
  max: number,
  status: number,
  message: string,
  id: unknown = null,
  headers: Record<string, string> = {},
  data?: unknown,
): void {
  const write = (): void => {
    if (res.headersSent || res.destroyed) return;
    // `connection: close`: an error ends the connection; the body is already read, so the client
    // reads this answer before the close.
    res.writeHead(status, { "content-type": "application/json", connection: "close", ...headers });
    res.end(rpcError(message, id, data));
  };
  // settleBody never rejects; the handler is here so a throw in `write` cannot go unhandled.
  settleBody(res.req, max)
    .then(write, write)
    .catch(() => res.destroy());
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
