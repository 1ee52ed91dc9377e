// `wasmcell/mcp`: the MCP server (the `run_code` tool over stdio, or Streamable HTTP with admission,
// a stateless mode for replicas, a bearer token, health and metrics endpoints and a graceful drain).
export { createMcpServer, mcpServerFactory, toCallToolResult, type CallGate, type McpServerOptions } from "./server.ts";
export { serveStdio, type StdioServeOptions } from "./transports.ts";
export { DEFAULT_MCP_HTTP, DEFAULT_MCP_STDIO } from "./defaults.ts";
export { serveHttp, type HttpMcpServer, type HttpServeOptions } from "./http.ts";
export { EventTap } from "./events.ts";
