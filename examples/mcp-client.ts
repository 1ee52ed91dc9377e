// An MCP client session against `wasmcell mcp`, with the official MCP SDK: start the server over stdio,
// list its tools, run JavaScript and Python, watch output stream in, and read an error.
// Run it with `node examples/mcp-client.ts` (no network; the server is a child process).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fileURLToPath } from "node:url";

// In an installed project this is `{ command: "npx", args: ["wasmcell", "mcp"] }`.
const server = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const client = new Client({ name: "wasmcell-example", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({ command: process.execPath, args: [server, "mcp", "--timeout-ms", "3000"] }),
);

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(", ")}`);

async function run(language: string, code: string): Promise<void> {
  const result = (await client.callTool({ name: "run_code", arguments: { language, code } }, undefined, {
    // Asking for progress makes the server stream the run's stdout as it is printed.
    onprogress: (p) => console.log(`  … ${p.message?.trimEnd() ?? ""}`),
  })) as CallToolResult;
  for (const part of result.content) {
    if (part.type === "text") console.log(`${result.isError ? "✗" : "✓"} ${part.text.replace(/\n/g, "\n  ")}`);
    else if (part.type === "image")
      console.log(`  [image ${part.mimeType}, ${Buffer.from(part.data, "base64").byteLength} bytes]`);
  }
}

await run(
  "javascript",
  "for (let i = 1; i <= 3; i++) { console.log(`step ${i}`); await new Promise((r) => setTimeout(r, 200)); }\n'done'",
);
await run("python", "import statistics\nstatistics.mean([3, 1, 4, 1, 5, 9, 2, 6])");
await run("typescript", "const xs: number[] = [1, 2];\nxs.map((x) => x.toUpperCase())");
await client.close();
