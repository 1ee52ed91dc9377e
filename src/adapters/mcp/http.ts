// The MCP server over Streamable HTTP, built to be shared: admission with honest refusals (see
// admission.ts, sessions.ts), a stateless mode for running replicas behind any load balancer, a bearer
// token for non-loopback binds (guard.ts), /healthz, /readyz and Prometheus /metrics, and a drain that
// finishes in-flight calls before the process exits.
//
// Both protocol revisions on one endpoint: a request that carries the 2026-07-28 `_meta` envelope (or
// its MCP-Protocol-Version header) goes to http-modern.ts, anything else (initialize, Mcp-Session-Id,
// GET and DELETE) to http-legacy.ts, by the SDK's own classification. This file reads and bounds the
// body, checks who is asking, admits the calls, and routes.

import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isLegacyRequest } from "@modelcontextprotocol/server";
import { Admission, FairQueue, type Refusal } from "./admission.ts";
import { BodyError, readJson } from "./body.ts";
import { checkRequest, isLoopbackHost } from "./guard.ts";
import type { HttpContext } from "./http-context.ts";
import { legacyRoutes } from "./http-legacy.ts";
import { modernRoutes } from "./http-modern.ts";
import { answer, header, isToolCall, messagesOf, text, type ReplyExtras } from "./http-reply.ts";
import { handleSessions, javascriptSlots, resolveHttpOptions, storedSessions } from "./http-setup.ts";
import { Metrics } from "./metrics.ts";
import { toWebRequest } from "./node-bridge.ts";
import { mcpServerFactory, type CallGate } from "./server.ts";
import type { HttpServeOptions } from "./http-options.ts";
import { SessionTable } from "./sessions.ts";
import { TaskTable } from "./tasks.ts";

export type { HttpServeOptions } from "./http-options.ts";

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
  const { o, tokenDigest } = resolveHttpOptions(options);
  const stored = o.sessionStore ? storedSessions(o, o.sessionStore) : undefined;
  // 2026-07-28 sessions are named by handles: in the store when there is one, else in this process.
  const handles = o.session ? (stored ?? handleSessions(o)) : undefined;
  // Built once per deployment, not per request: the tool's schema, description and the SDK's validator
  // cost more than the rest of a stateless request's server; each request adds only its gate and transport.
  // 2026-07-28 runs still going after a second become tasks for clients that declare the extension.
  const tasks = new TaskTable();
  const newServer = mcpServerFactory({ ...o, ...(stored ? { stored } : {}), ...(handles ? { handles } : {}), tasks });
  const loopback = isLoopbackHost(o.host);
  // Handles are bound to the credential: the token's digest (hashed again: the identity is no stand-in
  // for the token), or "loopback" where the bind needs none.
  const identity = tokenDigest ? `token:${createHash("sha256").update(tokenDigest).digest("hex")}` : "loopback";
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
  /** Why the last warm-up failed (it is tried again): /readyz says so instead of a bare "warming". */
  let warmFailure: string | undefined;

  const refuse = (res: ServerResponse, refusal: Refusal, id: unknown = null) => {
    metrics.refused(refusal.reason);
    const data = { reason: refusal.reason, retryAfterSeconds: refusal.retryAfterSeconds };
    reply(res, 503, refusal.message, id, { "retry-after": String(refusal.retryAfterSeconds) }, data);
  };
  const context: HttpContext = {
    stateless: o.stateless,
    trustProxy: o.trustProxy,
    maxSessions: o.maxSessions,
    maxBody,
    identity,
    newServer,
    gateFor: (client: string): CallGate => ({
      run: (lane, call, signal) => lanes[lane === "python" ? "python" : "javascript"].run(client, call, signal),
      finished: (language, outcome, seconds) => metrics.call(language, outcome, seconds),
    }),
    sessions,
    stored,
    reply,
    refuse,
    readBody: (req, res) => {
      const read = bodies.get(req) ?? (req.method === "POST" ? readJson(req, maxBody) : Promise.resolve(undefined));
      bodies.set(req, read);
      return read.then((body) => (body instanceof BodyError ? void reply(res, body.status, body.message) : { body }));
    },
    admit: (res, body, client) => {
      const calls = messagesOf(body).filter(isToolCall);
      if (calls.length === 0) return true;
      const ticket = admission.admit(client, calls.length);
      if ("reason" in ticket) return (void refuse(res, ticket, (calls[0] as { id?: unknown }).id ?? null), false);
      res.once("close", ticket.release);
      return true;
    },
  };
  const bodies = new WeakMap<IncomingMessage, Promise<unknown>>();
  const legacy = legacyRoutes(context);
  const modern = modernRoutes(context);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === "/healthz") return text(res, draining ? 503 : 200, draining ? "draining\n" : "ok\n");
    if (path === "/readyz")
      return text(
        res,
        ready && !draining ? 200 : 503,
        draining
          ? "draining\n"
          : ready
            ? "ready\n"
            : warmFailure
              ? `warming: the last try failed (${warmFailure}); trying again\n`
              : "warming\n",
      );
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
    // An Mcp-Session-Id, GET and DELETE are 2025-11-25 (2026-07-28 has none of them): answered, like
    // an unknown session, before the body is read. A POST's body decides (the SDK's classification).
    if (header(req, "mcp-session-id") !== undefined || req.method !== "POST") return legacy.handle(req, res);
    const read = await context.readBody(req, res);
    if (!read) return;
    const request = toWebRequest(req, res);
    if (await isLegacyRequest(request, read.body, { maxRequestBodySize: maxBody })) return legacy.handle(req, res);
    return modern.handle(req, res, request, read.body);
  }

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
  // Warm the JavaScript engine (and Python, if the sandbox prewarms it) before /readyz says so. A
  // warm-up that fails (an engine that could not start on a loaded machine) is tried again, 1 s after
  // the first failure and up to 30 s apart, until it works or the server closes; /readyz says why
  // meanwhile. Before, one failure left /readyz at 503 for good, and said nothing.
  let closing = false;
  const warm = (async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        await o.sandbox.run({ language: "javascript", code: "1" });
        await o.sandbox.warm();
        ready = true;
        warmFailure = undefined;
        return;
      } catch (error) {
        warmFailure = (error instanceof Error ? error.message : String(error)).slice(0, 300);
        if (closing) throw error;
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** attempt)).unref());
        if (closing) throw error;
      }
    }
  })();
  warm.catch(() => undefined);

  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      draining = true;
      closing = true;
      unsubscribe?.();
      await sessions.closeAll();
      await modern.close();
      tasks.close();
      await handles?.close();
      legacy.close();
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
