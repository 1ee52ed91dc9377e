// Threat: the MCP HTTP server (code execution, no authentication) reachable by someone other than the
// local user — another host on the network, or a web page in the user's browser through DNS rebinding
// — or knocked over by an oversized request.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import { createSandbox, InvalidOptionError, type Sandbox } from "../../src/index.ts";

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
});

function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("mcp over http", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());

  it("refuses to listen on anything but loopback", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10"]) {
      await assert.rejects(
        serveHttp({ sandbox, host }),
        (e: unknown) => e instanceof InvalidOptionError && e.field === "host",
        host,
      );
    }
  });

  it("refuses a request whose Host header is not the loopback address it serves (DNS rebinding)", async () => {
    await using server = await serveHttp({ sandbox });
    assert.equal(await post(server.url, { host: "evil.example" }, initialize), 403);
    assert.equal(await post(server.url, { host: `attacker.example:${new URL(server.url).port}` }, initialize), 403);
    assert.equal(await post(server.url, {}, initialize), 200);
  });

  it("refuses an oversized body without parsing it", async () => {
    await using server = await serveHttp({ sandbox, maxBodyBytes: 64 * 1024 });
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ pad: "x".repeat(1 << 20) }),
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /request body is larger than 65536 bytes/);
  });
});
