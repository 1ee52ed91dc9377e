// A 2026-07-28 client (SDK v2, pinned: no fallback to initialize) for the MCP server's tests.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export const MODERN = "2026-07-28";

/** Connects a v2 client pinned to 2026-07-28 over HTTP, with a bearer token when given. */
export async function connectModern(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: "wasmcell-test", version: "1" }, { versionNegotiation: { mode: { pin: MODERN } } });
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(url), requestInit ? { requestInit } : {}));
  return client;
}

/** Calls a tool; returns its text, whether it failed, and the session handle it returned (if any). */
export async function callModern(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
): Promise<{ text: string; isError: boolean; session: string | undefined }> {
  const r = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  const session = (r.structuredContent as { session?: unknown } | undefined)?.session;
  return { text, isError: r.isError === true, session: typeof session === "string" ? session : undefined };
}
