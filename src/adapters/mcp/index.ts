// `wasmcell/mcp`: the MCP server (the `run_code` tool over stdio or Streamable HTTP on loopback).
export { createMcpServer, toCallToolResult, type McpServerOptions } from "./server.ts";
export { serveHttp, serveStdio, type HttpMcpServer, type HttpServeOptions } from "./transports.ts";
