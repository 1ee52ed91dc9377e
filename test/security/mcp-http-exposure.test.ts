// Threat: the MCP HTTP server (code execution) reachable by someone other than the operator — another
// host on the network through a bind without a token, or a web page in the user's browser through DNS
// rebinding (a hostile Host) or a cross-origin request (a hostile Origin).
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import { createSandbox, InvalidOptionError, type Sandbox } from "../../src/index.ts";
import { runNode } from "../helpers/process.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
});

/** A raw POST (fetch cannot set Host), returning the status. */
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

describe("mcp over http: exposure", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());

  it("refuses to listen on anything but loopback without a bearer token", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10"]) {
      await assert.rejects(
        serveHttp({ sandbox, host }),
        (e: unknown) => e instanceof InvalidOptionError && e.field === "host" && /needs a bearer token/.test(e.message),
        host,
      );
    }
    await assert.rejects(
      serveHttp({ sandbox, host: "0.0.0.0", token: "short" }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "token",
    );
  });

  it("the CLI refuses a non-loopback --host without a token and starts nothing", async () => {
    const env = { ...process.env };
    delete env.WASMCELL_TOKEN;
    const ran = await runNode([MAIN, "mcp", "--http", "--host", "0.0.0.0"], { env });
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /"0\.0\.0\.0" is not a loopback address.*bearer token \(--token or WASMCELL_TOKEN\)/);
    assert.doesNotMatch(ran.stderr, /listening/);
  });

  it("refuses a request whose Host header is not a loopback host (DNS rebinding)", async () => {
    await using server = await serveHttp({ sandbox });
    const port = new URL(server.url).port;
    assert.equal(await post(server.url, { host: "evil.example" }, initialize), 403);
    assert.equal(await post(server.url, { host: `attacker.example:${port}` }, initialize), 403);
    assert.equal(await post(server.url, { host: `127.0.0.1.evil.example:${port}` }, initialize), 403);
    assert.equal(await post(server.url, {}, initialize), 200);
    assert.equal(await post(server.url, { host: `localhost:${port}` }, initialize), 200);
  });

  it("refuses a browser request from a non-loopback Origin, with or without a token", async () => {
    const token = "a-long-enough-test-token";
    await using server = await serveHttp({ sandbox, token });
    const auth = { authorization: `Bearer ${token}` };
    assert.equal(await post(server.url, { ...auth, origin: "https://evil.example" }, initialize), 403);
    assert.equal(await post(server.url, { ...auth, origin: "null" }, initialize), 403);
    assert.equal(await post(server.url, { ...auth, origin: "http://localhost:3000" }, initialize), 200);
    assert.equal(await post(server.url, auth, initialize), 200);
  });
});
