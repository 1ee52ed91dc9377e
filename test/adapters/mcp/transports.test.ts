// The HTTP transport's session bookkeeping, in process (its exposure guards: test/security/mcp-http-exposure.test.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../../../src/adapters/mcp/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";

describe("serveHttp", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(async () => {
    await sandbox.close();
  });

  test("keeps at most maxSessions sessions, closing the least recently used", async () => {
    await using server = await serveHttp({ sandbox, maxSessions: 2 });
    const clients = [];
    for (let i = 0; i < 3; i++) {
      const client = new Client({ name: `c${i}`, version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      clients.push(client);
    }
    await assert.rejects(clients[0]!.listTools(), /unknown or expired MCP session/);
    assert.equal((await clients[1]!.listTools()).tools[0]!.name, "run_code");
    assert.equal((await clients[2]!.listTools()).tools[0]!.name, "run_code");
    await Promise.all(clients.map((c) => c.close()));
  });
});
