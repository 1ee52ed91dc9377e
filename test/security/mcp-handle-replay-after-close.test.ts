// Threat: a session handle is replayed after its session was closed — by a client that kept it, or by
// anyone who saw it — and is quietly given a fresh session under the old name (the caller believes it
// is continuing the old state, or a closed tenant's name is reused). Closing leaves a tombstone in the
// store: the handle, its forks (when it was a family's first session) and fork_session on it are all
// refused with an error that says the session was closed, on every replica that shares the store.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../src/adapters/mcp/http.ts";
import { MemorySessionStore } from "../../src/stores/index.ts";
import { callModern, connectModern } from "../helpers/mcp-v2.ts";

describe("MCP session handles: replayed after close", () => {
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  let replica: HttpMcpServer;
  let client: Client;
  let other: Client;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    const store = new MemorySessionStore();
    server = await serveHttp({ sandbox, session: true, sessionStore: store });
    replica = await serveHttp({ sandbox, session: true, sessionStore: store });
    client = await connectModern(server.url);
    other = await connectModern(replica.url);
  });
  after(async () => {
    await Promise.all([client?.close(), other?.close()]);
    await Promise.all([server?.close(), replica?.close()]);
    await sandbox?.close();
  });

  test("a closed session's handle, and its forks', are refused everywhere", async () => {
    const root = (await callModern(client, "run_code", { language: "javascript", code: "var n = 1; n" })).session!;
    const fork = (await callModern(client, "fork_session", { language: "javascript", session: root })).session!;
    assert.match(
      (await callModern(client, "run_code", { language: "javascript", code: "n", session: fork })).text,
      /value: 1/,
    );
    const closed = await callModern(client, "close_session", { session: root });
    assert.equal(closed.isError, false, closed.text);
    for (const c of [client, other]) {
      for (const handle of [root, fork]) {
        const r = await callModern(c, "run_code", { language: "javascript", code: "typeof n", session: handle });
        assert.equal(r.isError, true);
        assert.match(r.text, /names a session that was closed/);
        assert.doesNotMatch(r.text, /undefined|number/);
      }
      const again = await callModern(c, "fork_session", { language: "javascript", session: root });
      assert.equal(again.isError, true);
      assert.match(again.text, /names a session that was closed/);
    }
  });

  test("closing a fork retires the fork only", async () => {
    const root = (await callModern(client, "run_code", { language: "javascript", code: "var m = 5; m" })).session!;
    const fork = (await callModern(client, "fork_session", { language: "javascript", session: root })).session!;
    await callModern(client, "close_session", { session: fork });
    const gone = await callModern(other, "run_code", { language: "javascript", code: "m", session: fork });
    assert.match(gone.text, /names a session that was closed/);
    const kept = await callModern(other, "run_code", { language: "javascript", code: "m", session: root });
    assert.match(kept.text, /value: 5/);
  });
});
