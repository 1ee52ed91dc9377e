// Threat: with sessions kept in a store, a client makes up MCP session ids (any well-formed UUID was
// "a session with nothing stored yet") and so escapes what is counted per client: the in-flight cap
// (keyed on the id the request carries) and `maxSessions` (a made-up id never passes initialize); it
// runs code in another client's session by naming it, and in another client's fork. Ids are now
// minted and authenticated by the server (a tag under a key derived from `sessions.key`, so every
// replica sharing the key checks them): a made-up id is an unknown session (404) and is never
// admitted; `session` names only the caller's own forks; initialize past `maxSessions` is refused.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../src/adapters/mcp/http.ts";
import { MemorySessionStore } from "../../src/stores/index.ts";
import { connectClient, resultText } from "../helpers/mcp-http.ts";

const call = (id: string | undefined, body: object) =>
  ({
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(id ? { "mcp-session-id": id } : {}),
    },
    body: JSON.stringify(body),
  }) satisfies RequestInit;

const runCode = (code: string, session?: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "run_code", arguments: { language: "javascript", code, ...(session ? { session } : {}) } },
});

describe("stored MCP sessions: session ids are the server's, not the client's", () => {
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    server = await serveHttp({ sandbox, session: true, sessionStore: new MemorySessionStore() });
  });
  after(async () => {
    await server?.close();
    await sandbox?.close();
  });

  test("a made-up session id is an unknown session: 404, nothing runs, nothing is counted", async () => {
    for (const made of [randomUUID(), "00000000-0000-0000-0000-000000000000"]) {
      const res = await fetch(server.url, call(made, runCode("globalThis.mine = 1; 'ran'")));
      const text = await res.text();
      assert.equal(res.status, 404, text);
      assert.doesNotMatch(text, /ran/);
    }
  });

  test("`session` names only the caller's own forks, never another client's session or fork", async () => {
    const owner = await connectClient(server.url, "owner");
    const other = await connectClient(server.url, "other");
    try {
      const ownerId = (owner.transport as { sessionId?: string }).sessionId!;
      await owner.callTool({
        name: "run_code",
        arguments: { language: "javascript", code: "globalThis.secret = 'owner'" },
      });
      const forked = (await owner.callTool({
        name: "fork_session",
        arguments: { language: "javascript" },
      })) as CallToolResult;
      const fork = (forked.structuredContent as { session: string }).session;
      // The owner uses its fork.
      const mine = await owner.callTool({
        name: "run_code",
        arguments: { language: "javascript", code: "secret", session: fork },
      });
      assert.match(resultText(mine), /owner/);
      // Another client names the owner's session, then its fork: refused, nothing of theirs is read.
      for (const target of [ownerId, fork]) {
        const r = (await other.callTool({
          name: "run_code",
          arguments: {
            language: "javascript",
            code: "typeof secret === 'undefined' ? 'none' : secret",
            session: target,
          },
        })) as CallToolResult;
        assert.equal(r.isError, true, resultText(r));
        assert.match(resultText(r), /not a session of this connection/);
        assert.doesNotMatch(resultText(r), /owner/);
      }
    } finally {
      await owner.close();
      await other.close();
    }
  });

  test("initialize past maxSessions is refused: the count is of sessions the server opened", async () => {
    const small = await serveHttp({ sandbox, session: true, sessionStore: new MemorySessionStore(), maxSessions: 2 });
    const clients = [];
    try {
      for (let i = 0; i < 2; i++) clients.push(await connectClient(small.url, `c${i}`));
      await assert.rejects(connectClient(small.url, "one too many"), /open sessions/);
      // Made-up ids do not add to it, nor get around it.
      const made = await fetch(small.url, call(randomUUID(), runCode("1")));
      assert.equal(made.status, 404, await made.text());
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await small.close();
    }
  });
});
