// MCP 2025-11-25 over Streamable HTTP (initialize, Mcp-Session-Id), in the server's three modes, on the
// SDK's web-standard transport (node-bridge.ts carries requests and answers across).
//
// Stateful (default): each client's initialize opens a session (Mcp-Session-Id) that lives in this
// process; behind a balancer that needs sticky routing on that header, and `session: true` interpreters
// need it too. Stateless: every POST gets a fresh MCP server and transport and no session id, so any
// replica answers any request; the server is cheap because what does not depend on the client (the
// tool's schema and description, the SDK's validator) is built once in serveHttp. A stateless call
// that asked for progress streams as SSE; one that did not gets a plain JSON response, so a replica
// that dies mid-call fails the request at once (the client retries elsewhere) instead of leaving an
// event stream the client would wait on until its timeout. Stored: sessions in a store, below.

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { Refusal } from "./admission.ts";
import type { HttpContext } from "./http-context.ts";
import { clientAddress, hasProgressToken, header, messagesOf, rpcError } from "./http-reply.ts";
import { sendWebResponse, toWebRequest } from "./node-bridge.ts";
import type { StoredSessions } from "./stored-sessions.ts";

/** A stored session in the sessions table: its state is in the store, so there is nothing to close. */
const IN_STORE = { close: () => Promise.resolve() };

/** The 2025-11-25 routes: `handle` serves one request in the server's mode; `close` ends every session. */
export function legacyRoutes(c: HttpContext) {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const maxSessionsRefusal = (retryAfterSeconds: number): Refusal => ({
    reason: "max-sessions",
    message: `the server has ${c.maxSessions} open sessions (--max-sessions); none is idle past its TTL yet`,
    retryAfterSeconds,
  });

  /** Serves one request with a fresh server and an SDK transport in its stateless mode. */
  async function once(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    client: string,
    sessionId?: string,
  ): Promise<void> {
    const server = c.newServer(c.gateFor(client), sessionId, { era: "legacy", identity: c.identity });
    // No sessionIdGenerator: the SDK's stateless mode (no Mcp-Session-Id, no session validation).
    const transport = new WebStandardStreamableHTTPServerTransport({
      enableJsonResponse: !messagesOf(body).some(hasProgressToken),
    });
    res.once("close", () => void server.close().catch(() => undefined));
    await server.connect(transport);
    await sendWebResponse(res, await transport.handleRequest(toWebRequest(req, res), { parsedBody: body }));
  }

  async function stateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST", "content-type": "application/json" });
      return void res.end(rpcError("stateless server: only POST is served (no event stream, no sessions)"));
    }
    const read = await c.readBody(req, res);
    if (!read) return;
    const body = read.body;
    const client = clientAddress(req, c.trustProxy);
    if (c.admit(res, body, client)) await once(req, res, body, client);
  }

  /**
   * Stored sessions: the session id is ours, not the SDK's. Initialize mints one — a session handle
   * (session-ids.ts), the same name a 2026-07-28 client passes as `session` — in the Mcp-Session-Id
   * response header, and counts it against `maxSessions` here; every later request carries it and is
   * served by a fresh server and an SDK transport in its stateless mode, on whichever process receives
   * it, because the session's state is in the store, not here. An id no server of this deployment
   * minted for this credential, or one whose session was closed, is an unknown session (404): a client
   * cannot make one up to get past the per-client cap or `maxSessions`. A minted id that reaches this
   * process is counted here while it is in use. DELETE removes the session's records and its forks'
   * and retires the id; there is no GET event stream (405, as the specification allows), so a dead
   * process leaves no stream for a client to wait on.
   */
  async function stored(req: IncomingMessage, res: ServerResponse, stored: StoredSessions): Promise<void> {
    const given = header(req, "mcp-session-id");
    const session = given === undefined ? undefined : stored.ids.read(c.identity, given);
    if (given !== undefined && !session?.root)
      return c.reply(res, 404, "unknown MCP session (not an id this server issued): initialize a new one");
    if (session && (await stored.isClosed(session.owner, session.handle)))
      return c.reply(res, 404, "this MCP session was closed (DELETE): initialize a new one");
    if (req.method === "DELETE") {
      if (!session) return c.reply(res, 400, "DELETE needs the Mcp-Session-Id of the session to end");
      c.sessions.delete(session.handle);
      await stored.end(session);
      return void res.writeHead(200).end();
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST, DELETE", "content-type": "application/json" });
      return void res.end(rpcError("this server keeps sessions in a store: POST and DELETE only, no event stream"));
    }
    if (session) {
      const id = session.handle;
      const end = c.sessions.begin(id) ?? (c.sessions.add(id, IN_STORE), c.sessions.begin(id));
      if (end) res.once("close", end);
    }
    const read = await c.readBody(req, res);
    if (!read) return;
    const body = read.body;
    if (!c.admit(res, body, given ?? clientAddress(req, c.trustProxy))) return;
    let id = session?.handle;
    if (id === undefined) {
      const init = messagesOf(body).find((m) => isInitializeRequest(m)) as { id?: unknown } | undefined;
      if (!init) return c.reply(res, 400, "no MCP session: send an initialize request first");
      const room = c.sessions.reserve();
      if ("retryAfterSeconds" in room)
        return c.refuse(res, maxSessionsRefusal(room.retryAfterSeconds), init.id ?? null);
      id = stored.ids.session(c.identity);
      c.sessions.add(id, IN_STORE);
      room.done();
      // Set before the SDK's answer is written: writeHead merges it into the headers sent.
      res.setHeader("mcp-session-id", id);
    }
    await once(req, res, body, id, id);
  }

  async function stateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = header(req, "mcp-session-id");
    if (sessionId !== undefined) {
      const end = c.sessions.begin(sessionId);
      if (!end) return c.reply(res, 404, "unknown or expired MCP session: initialize a new one");
      // A GET is the client's event stream, open for as long as it is connected: not "in use".
      if (req.method === "GET") end();
      else res.once("close", end);
      const read = await c.readBody(req, res);
      if (!read || !c.admit(res, read.body, sessionId)) return;
      const body = read.body;
      const transport = transports.get(sessionId);
      // Closed while its body was read (a DELETE, the server closing): the same answer as unknown.
      if (!transport) return c.reply(res, 404, "unknown or expired MCP session: initialize a new one");
      const request = toWebRequest(req, res);
      return sendWebResponse(res, await transport.handleRequest(request, { parsedBody: body }));
    }
    if (req.method !== "POST") return c.reply(res, 400, "no MCP session: send an initialize request first");
    const read = await c.readBody(req, res);
    if (!read) return;
    const body = read.body;
    if (!isInitializeRequest(body)) return c.reply(res, 400, "no MCP session: send an initialize request first");
    const room = c.sessions.reserve();
    if ("retryAfterSeconds" in room) {
      return c.refuse(res, maxSessionsRefusal(room.retryAfterSeconds), (body as { id?: unknown }).id ?? null);
    }
    try {
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          transports.set(sid, transport);
          c.sessions.add(sid, { close: () => transport.close() });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) {
          transports.delete(transport.sessionId);
          c.sessions.delete(transport.sessionId);
        }
      };
      const server = c.newServer(c.gateFor(randomUUID()), undefined, { era: "legacy", identity: c.identity });
      await server.connect(transport);
      await sendWebResponse(res, await transport.handleRequest(toWebRequest(req, res), { parsedBody: body }));
    } finally {
      room.done();
    }
  }

  return {
    handle: (req: IncomingMessage, res: ServerResponse): Promise<void> =>
      c.stateless ? stateless(req, res) : c.stored ? stored(req, res, c.stored) : stateful(req, res),
    close: () => transports.clear(),
  };
}
