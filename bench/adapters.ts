// What the adapters add on top of `sandbox.run`, for a tiny JavaScript snippet: the shared tool layer
// (validation + model-facing text), code mode's host-tool bridge, and an MCP round trip over stdio
// (the CLI server as a child process) and over Streamable HTTP on loopback.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../src/adapters/mcp/index.ts";
import { createToolkit } from "../src/adapters/tools/index.ts";
import { createSandbox } from "../src/index.ts";
import { measure, type Row } from "./measure.ts";

export async function bench(): Promise<string> {
  const rows: Row[] = [];
  await using sandbox = await createSandbox();
  const kit = createToolkit({ sandbox, codeMode: { tools: { echo: { call: (input) => Promise.resolve(input) } } } });
  const args = { language: "javascript", code: "1 + 1" };
  rows.push(
    await measure("sandbox.run (baseline)", 2_000, () => sandbox.run({ language: "javascript", code: "1 + 1" })),
  );
  rows.push(await measure("toolkit.handleToolCall run_code", 2_000, () => kit.handleToolCall("run_code", args)));
  rows.push(
    await measure("code mode, 1 tool call", 1_000, () =>
      kit.handleToolCall("code_mode", { code: "(await tools.echo({ n: 1 })).n" }),
    ),
  );
  rows.push(
    await measure("code mode, 10 sequential tool calls", 500, () =>
      kit.handleToolCall("code_mode", {
        code: "let s = 0; for (let i = 0; i < 10; i++) s += (await tools.echo({ n: i })).n; s",
      }),
    ),
  );

  const stdio = new Client({ name: "bench", version: "1" });
  await stdio.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [fileURLToPath(new URL("../src/cli/main.ts", import.meta.url)), "mcp"],
    }),
  );
  rows.push(
    await measure("MCP tools/call over stdio (child process)", 500, () =>
      stdio.callTool({ name: "run_code", arguments: args }),
    ),
  );
  await stdio.close();

  await using http = await serveHttp({ sandbox });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  rows.push(
    await measure("MCP tools/call over Streamable HTTP (loopback)", 500, () =>
      client.callTool({ name: "run_code", arguments: args }),
    ),
  );
  await client.close();

  const fmt = (ms: number) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(2));
  return [
    "## Adapters (JavaScript `1 + 1`)",
    "",
    "| path | runs | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
    ...rows.map((r) => `| ${r.what} | ${r.runs} | ${fmt(r.p50)} | ${fmt(r.p99)} |`),
  ].join("\n");
}

if (import.meta.main) console.log(await bench());
