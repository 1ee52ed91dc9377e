// MCP 2026-07-28 over Streamable HTTP: every request carries its protocol version, client capabilities
// and log level in `_meta` and stands alone (no initialize, no Mcp-Session-Id), so each is served by a
// fresh server from the shared factory, on any replica. `server/discover` answers what the server
// offers. Sessions are named by handles in the calls themselves (session-ids.ts), kept in the
// sessions store (or, without one, in this process). The SDK's handler does the revision's validation
// ladder (envelope, MCP-Protocol-Version header, Mcp-Method/Mcp-Name headers) and the answer's shape.

import type { IncomingMessage, ServerResponse } from "node:http";
import { createMcpHandler, type McpRequestContext } from "@modelcontextprotocol/server";
import type { HttpContext } from "./http-context.ts";
import { clientAddress } from "./http-reply.ts";
import { sendWebResponse } from "./node-bridge.ts";
import type { CallGate } from "./server.ts";

export function modernRoutes(c: HttpContext) {
  // The SDK calls the factory with the Request it was given; the request's gate rides on it.
  const gates = new WeakMap<Request, CallGate>();
  const handler = createMcpHandler(
    (ctx: McpRequestContext) => {
      const gate = ctx.requestInfo ? gates.get(ctx.requestInfo) : undefined;
      return c.newServer(gate, undefined, { era: "modern", identity: c.identity });
    },
    // 2025-era requests never reach this handler (http.ts routes them to http-legacy.ts).
    { legacy: "reject", maxRequestBodySize: c.maxBody },
  );
  return {
    /** Serves one 2026-07-28 POST; `body` is its body, already read by http.ts. */
    async handle(req: IncomingMessage, res: ServerResponse, request: Request, body: unknown): Promise<void> {
      const client = clientAddress(req, c.trustProxy);
      if (!c.admit(res, body, client)) return;
      gates.set(request, c.gateFor(client));
      await sendWebResponse(res, await handler.fetch(request, { parsedBody: body }));
    },
    close: () => handler.close(),
  };
}
