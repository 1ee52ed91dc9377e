// Threat: a request body built to knock the MCP HTTP server over or wedge it — truncated JSON, megabytes
// of junk, an oversized body, 100,000-deep nesting. Each gets a 4xx and the server answers afterwards.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import { createSandbox } from "../../src/index.ts";

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("mcp over http: malformed bodies", () => {
  for (const stateless of [false, true]) {
    it(`each gets a 4xx and the server keeps serving (${stateless ? "stateless" : "stateful"})`, async () => {
      await using sandbox = await createSandbox();
      await using server = await serveHttp({ sandbox, stateless });
      const deep = "[".repeat(100_000) + "]".repeat(100_000);
      const deepObject = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
      const bodies: [string, string | Uint8Array, RegExp][] = [
        ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":"initialize","par', /^4\d\d$/],
        ["5 MB of junk", new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 31) & 0xff), /^413$/],
        ["oversized valid JSON", JSON.stringify({ pad: "x".repeat(4 << 20) }), /^413$/],
        ["100,000-deep array", deep, /^4\d\d$/],
        ["100,000-deep object", deepObject, /^4\d\d$/],
        [
          "a tools/call with deep arguments",
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deepObject}}`,
          /^4\d\d$|^200$/,
        ],
      ];
      for (const [what, body, status] of bodies) {
        const res = await fetch(server.url, { method: "POST", headers, body });
        assert.match(String(res.status), status, what);
        await res.arrayBuffer();
      }
      const client = new Client({ name: "after", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const r = await client.callTool({ name: "run_code", arguments: { language: "javascript", code: "'alive'" } });
      assert.match(JSON.stringify(r), /alive/);
      await client.close();
    });
  }
});
