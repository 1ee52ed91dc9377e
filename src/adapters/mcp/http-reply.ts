// The MCP HTTP server's own answers (refusals, errors, plain text) and the small readings of a request
// its routes share.

import type { IncomingMessage, ServerResponse } from "node:http";
import { settleBody } from "./body.ts";

export type ReplyExtras = [id?: unknown, headers?: Record<string, string>, data?: unknown];

export function rpcError(message: string, id: unknown = null, data?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message, ...(data ? { data } : {}) }, id });
}

/** Writes a JSON-RPC error answer once the request's body is read (see body.ts for why). */
export function answer(
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

export function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

export function isToolCall(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === "tools/call";
}

export function hasProgressToken(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
  return meta?.progressToken !== undefined;
}

/** The messages of a JSON-RPC body (one, or a batch). */
export function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers["x-forwarded-for"] : undefined;
  const last = (Array.isArray(forwarded) ? forwarded.at(-1) : forwarded)?.split(",").at(-1)?.trim();
  return last || (req.socket.remoteAddress ?? "unknown");
}

/** The one value of a request header (the first, when a client sent it twice). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
