// Serving the MCP server over stdio (what Claude Desktop/Code and Cursor launch) and over Streamable
// HTTP on loopback. HTTP has no authentication, so it binds to loopback addresses only and checks the
// Host header (DNS-rebinding protection): a web page in the user's browser must not be able to run code.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InvalidOptionError } from "../../errors.ts";
import { createMcpServer, type McpServerOptions } from "./server.ts";

/** Serves one client over stdin/stdout until stdin closes. */
export async function serveStdio(options: McpServerOptions): Promise<{ closed: Promise<void> }> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", () => void server.close().then(resolve, resolve));
  });
  await server.connect(transport);
  return { closed };
}

export interface HttpServeOptions extends McpServerOptions {
  /** TCP port; 0 picks a free one (the URL in the result says which). Default 0. */
  port?: number;
  /** A loopback address. Default "127.0.0.1". */
  host?: string;
  /** Largest request body accepted, in bytes. Default: twice the code cap plus 1 MiB for files and framing. */
  maxBodyBytes?: number;
  /** Client sessions kept at once; past it the least recently used one is closed. Default 32. */
  maxSessions?: number;
}

export interface HttpMcpServer extends AsyncDisposable {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Serves MCP over Streamable HTTP at `/mcp`, one server session per client session. */
export async function serveHttp(options: HttpServeOptions): Promise<HttpMcpServer> {
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host) && !/^127\.\d+\.\d+\.\d+$/.test(host)) {
    throw new InvalidOptionError(
      "host",
      `"${host}" is not a loopback address; the MCP HTTP server has no authentication and only listens on loopback`,
    );
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidOptionError("port", "must be an integer from 0 to 65535");
  const maxBody = options.maxBodyBytes ?? options.sandbox.options.limits.maxCodeBytes * 2 + (1 << 20);
  const maxSessions = options.maxSessions ?? 32;
  // Insertion order is recency order (a used session is moved to the end), so the first is the LRU.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        reply(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== "/mcp") return reply(res, 404, "not found: the MCP endpoint is /mcp");
    const id = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(id) ? id[0] : id;
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) return reply(res, 404, "unknown or expired MCP session");
      sessions.delete(sessionId);
      sessions.set(sessionId, transport);
      const body = req.method === "POST" ? await readJson(req, maxBody) : undefined;
      if (body instanceof Error) return reply(res, 400, body.message);
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST") return reply(res, 400, "no MCP session: send an initialize request first");
    const body = await readJson(req, maxBody);
    if (body instanceof Error) return reply(res, 400, body.message);
    if (!isInitializeRequest(body)) return reply(res, 400, "no MCP session: send an initialize request first");
    // Sessions are cheap but not free, and clients often vanish without a DELETE: keep a bounded set.
    while (sessions.size >= maxSessions) {
      const [oldest, stale] = sessions.entries().next().value!;
      sessions.delete(oldest);
      await stale.close();
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = createMcpServer(options);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  const actual = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${actual}`, `localhost:${actual}`, `[::1]:${actual}`];
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const close = async () => {
    await Promise.allSettled([...sessions.values()].map((t) => t.close()));
    sessions.clear();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return { url: `http://${shownHost}:${actual}/mcp`, close, [Symbol.asyncDispose]: close };
}

function reply(res: ServerResponse, status: number, message: string): void {
  // `connection: close` so an unread (oversized) body is dropped with the socket, not drained.
  res.writeHead(status, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** Reads a JSON body up to `max` bytes. Returns an Error (not thrown) for an oversized or malformed body. */
async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > max) return new Error(`request body is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return new Error("request body is not valid JSON");
  }
}
