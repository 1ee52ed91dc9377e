// Serving the MCP server over stdio (what Claude Desktop/Code and Cursor launch). Streamable HTTP, with
// its admission, token and health endpoints, is in http.ts.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
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
