// End-to-end: `wasmcell mcp --engine native` as a child process over stdio, driven by the official MCP
// client: the figure `plt.show()` displays comes back as image content, a DataFrame's HTML as
// structured content and its text/plain in the text.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const MAIN = fileURLToPath(new URL("../../../src/cli/main.ts", import.meta.url));

describe("wasmcell mcp --engine native: display items", () => {
  let client: Client;
  before(async () => {
    client = new Client({ name: "wasmcell-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "mcp", "--engine", "native", "--timeout-ms", "30000"],
        stderr: "pipe",
      }),
    );
  });
  after(async () => {
    await client.close();
  });

  const call = (code: string) =>
    client.callTool({ name: "run_code", arguments: { language: "python", code } }) as Promise<CallToolResult>;

  test("run_code returns the plt.show() figure as image content", async () => {
    const r = await call("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()");
    assert.equal(r.isError, undefined, JSON.stringify(r).slice(0, 500));
    const image = r.content.find((c) => c.type === "image");
    assert.ok(image && image.type === "image", JSON.stringify(r.content.map((c) => c.type)));
    assert.equal(image.mimeType, "image/png");
    assert.deepEqual(
      [...Buffer.from(image.data, "base64").subarray(0, 8)],
      [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    );
    const text = r.content.find((c) => c.type === "text");
    assert.match(
      text?.type === "text" ? text.text : "",
      /displayed \(1\):\n\[1\] \[image\/png; image shown below\]\n<Figure size/,
    );
  });

  test("a DataFrame's table comes back as structured content, its text/plain in the text", async () => {
    const r = await call("import pandas as pd\npd.DataFrame({'a': [1, 2]})");
    const structured = r.structuredContent as { results: { data: Record<string, unknown>; main: boolean }[] };
    assert.equal(structured.results.length, 1);
    assert.equal(structured.results[0]!.main, true);
    assert.match(String(structured.results[0]!.data["text/html"]), /<table/);
    const text = r.content.find((c) => c.type === "text");
    assert.match(
      text?.type === "text" ? text.text : "",
      /\[1\] \(the last expression\) \[text\/html, application\/json\]\n\(the value above\)/,
    );
  });
});
