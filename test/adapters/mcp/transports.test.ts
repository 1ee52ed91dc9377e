// The HTTP transport's own guards, in process: loopback only, bounded sessions, bounded bodies.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../../../src/adapters/mcp/index.ts";
import { createSandbox, InvalidOptionError, type Sandbox } from "../../../src/index.ts";

describe("serveHttp", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { maxCodeBytes: 1024 } });
  });
  after(async () => {
    await sandbox.close();
  });

  test("refuses to listen on a non-loopback address", async () => {
    await assert.rejects(serveHttp({ sandbox, host: "0.0.0.0" }), (e: unknown) => e instanceof InvalidOptionError && e.field === "host");
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

  test("refuses an oversized body before parsing it", async () => {
    await using server = await serveHttp({ sandbox });
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ pad: "x".repeat(4 << 20) }),
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /request body is larger than/);
  });
});
