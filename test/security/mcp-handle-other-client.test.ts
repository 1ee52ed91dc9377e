// Threat: a client holding one credential uses a session handle minted for another — learned from a
// log, a shared transcript, a proxy — to read or change that tenant's interpreter, fork it, or close
// it. Handles are bound to the credential they were minted under (the tag covers the bearer token's
// digest): two servers with different tokens share one store and one `sessions.key` (two tenants'
// deployments on one Redis, or one deployment's replicas after a token change), and a handle from one
// is refused by the other with a clear error; the owner's session stays whole.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../src/adapters/mcp/http.ts";
import { MemorySessionStore } from "../../src/stores/index.ts";
import { callModern, connectModern } from "../helpers/mcp-v2.ts";

const TOKEN_A = "tenant-a-token-0123456789";
const TOKEN_B = "tenant-b-token-9876543210";

describe("MCP session handles are bound to the client's credential", () => {
  let sandbox: Sandbox;
  let serverA: HttpMcpServer;
  let serverB: HttpMcpServer;
  let a: Client;
  let b: Client;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    const store = new MemorySessionStore();
    serverA = await serveHttp({ sandbox, session: true, sessionStore: store, token: TOKEN_A });
    serverB = await serveHttp({ sandbox, session: true, sessionStore: store, token: TOKEN_B });
    a = await connectModern(serverA.url, TOKEN_A);
    b = await connectModern(serverB.url, TOKEN_B);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([serverA?.close(), serverB?.close()]);
    await sandbox?.close();
  });

  test("another client's handle is refused by run_code, fork_session and close_session", async () => {
    const mine = await callModern(a, "run_code", { language: "python", code: "secret = 'tenant-a'\n1" });
    assert.equal(mine.isError, false, mine.text);
    const handle = mine.session!;
    const refused = /is not a session handle this server issued to this client/;
    const read = await callModern(b, "run_code", { language: "python", code: "secret", session: handle });
    assert.equal(read.isError, true);
    assert.match(read.text, refused);
    assert.doesNotMatch(read.text, /tenant-a'/);
    const write = await callModern(b, "run_code", { language: "python", code: "secret = 'b'", session: handle });
    assert.match(write.text, refused);
    const fork = await callModern(b, "fork_session", { language: "python", session: handle });
    assert.equal(fork.isError, true);
    assert.match(fork.text, refused);
    const close = await callModern(b, "close_session", { session: handle });
    assert.equal(close.isError, true);
    assert.match(close.text, refused);
    // B's own sessions are its own; A's is whole and still A's.
    const own = await callModern(b, "run_code", { language: "python", code: "'secret' in globals()" });
    assert.match(own.text, /value: false/);
    const still = await callModern(a, "run_code", { language: "python", code: "secret", session: handle });
    assert.match(still.text, /value: "tenant-a"/);
  });
});
