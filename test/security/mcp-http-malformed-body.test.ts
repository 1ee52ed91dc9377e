// Threat: a request body built to knock the MCP HTTP server over or wedge it — truncated JSON, megabytes
// of junk, an oversized body, 100,000-deep nesting. Each gets a 4xx and the server answers afterwards.
// And the answer reaches the client: an early 4xx or 503 whose socket the server closed while body
// bytes were still arriving is a reset (EPIPE) at a client that did nothing wrong but be slow, so every
// answer waits for the body; an endless body is cut past the discard limit instead of read for ever.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import { createSandbox } from "../../src/index.ts";

/** A body of `total` bytes sent slowly (256 KiB every 2 ms), so the server answers while it arrives. */
function slowBody(total: number, sent = { bytes: 0 }): ReadableStream<Uint8Array> {
  const chunk = 256 * 1024;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent.bytes >= total) return controller.close();
      await new Promise((r) => setTimeout(r, 2));
      controller.enqueue(new Uint8Array(chunk).fill(0x20));
      sent.bytes += chunk;
    },
  });
}

/** POSTs a slow body; `length` declares its size up front instead of sending it chunked. */
function postSlow(url: string, total: number, extra: Record<string, string> = {}, sent = { bytes: 0 }) {
  return fetch(url, { method: "POST", headers: { ...headers, ...extra }, body: slowBody(total, sent), duplex: "half" });
}

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

  it("an oversized body still arriving, chunked or of declared length, is answered 413, never reset", async () => {
    await using sandbox = await createSandbox();
    await using server = await serveHttp({ sandbox, maxBodyBytes: 1 << 20 });
    // Five of each: before the fix about half of these were an EPIPE at the client.
    for (const declared of [false, true]) {
      for (let i = 0; i < 5; i++) {
        const length: Record<string, string> = declared ? { "content-length": String(3 << 20) } : {};
        const res = await postSlow(server.url, 3 << 20, length);
        assert.equal(res.status, 413, declared ? "declared" : "chunked");
        assert.match(await res.text(), /larger than 1048576 bytes/);
      }
    }
  });

  it("an answer given before the body is read (no token, unknown session) reaches a client still sending", async () => {
    await using sandbox = await createSandbox();
    const token = "a-token-of-at-least-16-characters";
    await using guarded = await serveHttp({ sandbox, token });
    await using open = await serveHttp({ sandbox });
    for (let i = 0; i < 5; i++) {
      const denied = await postSlow(guarded.url, 2 << 20);
      assert.equal(denied.status, 401);
      await denied.arrayBuffer();
      const unknown = await postSlow(open.url, 2 << 20, { "mcp-session-id": "0f7a1c52-3c8e-4c59-9d7e-2f0c8d1e6b3a" });
      assert.equal(unknown.status, 404);
      assert.match(await unknown.text(), /unknown or expired MCP session/);
    }
  });

  it("an endless body is cut past the discard limit, and the server keeps serving", async () => {
    await using sandbox = await createSandbox();
    // A 1 MiB cap reads and throws away at most 8 MiB before cutting the connection.
    await using server = await serveHttp({ sandbox, maxBodyBytes: 1 << 20 });
    const sent = { bytes: 0 };
    const total = 256 << 20;
    // The cut client may read the 413 or see the reset: either way its request ends, long before the
    // 256 MiB it would send if the server kept reading (what the byte count checks).
    await postSlow(server.url, total, {}, sent).then(
      (res) => res.arrayBuffer(),
      () => undefined,
    );
    assert.ok(sent.bytes < 64 << 20, `the server read ${sent.bytes} bytes of an endless body`);
    const res = await fetch(server.url.replace("/mcp", "/healthz"));
    assert.equal(await res.text(), "ok\n");
  });
});
