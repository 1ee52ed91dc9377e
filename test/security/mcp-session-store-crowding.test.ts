// Threat: with MCP sessions kept in a DiskSessionStore, one client's large sessions push another
// client's state out of the store's size budget (the least recently used go first), and the victim's
// next call silently runs in a fresh interpreter: its variables are gone and nothing says so. Each MCP
// session now has a quota (`sessionQuotaBytes`, over all its records: each language and each fork),
// so a client cannot take more than its share: the save that would pass it is refused and the others'
// state stays. And a session the budget did push out (a store sized under sessions × quota) is told
// its state is gone, once, before it starts again.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../src/adapters/mcp/http.ts";
import { DiskSessionStore } from "../../src/stores/index.ts";
import { connectClient, resultText } from "../helpers/mcp-http.ts";

const MiB = 1 << 20;
const python = (client: Client, code: string, session?: string) =>
  client.callTool({
    name: "run_code",
    arguments: { language: "python", code, ...(session ? { session } : {}) },
  }) as Promise<CallToolResult>;
// About 1.6 MB of stored state (random bytes do not compress).
const HEAVY = "import os\nblob = os.urandom(3 << 19)\nlen(blob)";

describe("stored MCP sessions on disk: no client takes another's room", () => {
  let sandbox: Sandbox;
  let dir: string;
  const servers: HttpMcpServer[] = [];
  const serve = async (maxBytes: number, sessionQuotaBytes: number) => {
    const store = new DiskSessionStore({ dir: mkdtempSync(join(dir, "store-")), maxBytes });
    const server = await serveHttp({ sandbox, session: true, sessionStore: store, sessionQuotaBytes });
    servers.push(server);
    return server;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "wasmcell-crowding-"));
    sandbox = await createSandbox({
      python: { pool: 2 },
      sessions: { key: "crowding-test-key-0123456789abcdefghijkl" },
    });
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    "a session over its quota is refused (its own state kept as it was); the others' state stays",
    { timeout: 120_000 },
    async () => {
      const server = await serve(4 * MiB, 2 * MiB);
      const victim = await connectClient(server.url, "victim");
      const heavy = await connectClient(server.url, "heavy");
      try {
        assert.match(resultText(await python(victim, "x = 42\nx")), /value: 42$/);
        assert.match(resultText(await python(heavy, "y = 1\ny")), /value: 1$/);
        // 1.6 MB: within the quota. A fork of it would double it: refused.
        assert.match(resultText(await python(heavy, HEAVY)), /value: 1572864$/);
        const fork = (await heavy.callTool({
          name: "fork_session",
          arguments: { language: "python" },
        })) as CallToolResult;
        assert.equal(fork.isError, true, resultText(fork));
        assert.match(resultText(fork), /quota/);
        // Grown past the quota in place: refused, and the session is as it was before that call.
        const more = await python(heavy, "blob2 = os.urandom(3 << 19)\nlen(blob2)");
        assert.equal(more.isError, true, resultText(more));
        assert.match(resultText(more), /over this MCP session's quota/);
        assert.match(resultText(await python(heavy, "'blob2' in dir(), len(blob)")), /value: \[false, 1572864\]$/);
        // The victim's state is where it was.
        assert.match(resultText(await python(victim, "x")), /value: 42$/);
      } finally {
        await victim.close();
        await heavy.close();
      }
    },
  );

  test("a session the store's budget pushed out is told its state is gone, once", { timeout: 120_000 }, async () => {
    // A budget under sessions × quota: the operator's choice; the least recently used go first.
    const server = await serve(3 * MiB, 2 * MiB);
    const victim = await connectClient(server.url, "victim");
    const a = await connectClient(server.url, "a");
    const b = await connectClient(server.url, "b");
    try {
      assert.match(resultText(await python(victim, "x = 42\nx")), /value: 42$/);
      assert.match(resultText(await python(a, HEAVY)), /value: 1572864$/);
      assert.match(resultText(await python(b, HEAVY)), /value: 1572864$/);
      const told = await python(victim, "x");
      assert.equal(told.isError, true, resultText(told));
      assert.match(resultText(told), /state is gone/);
      // Then a fresh session, said once: x is not defined any more.
      assert.match(resultText(await python(victim, "x")), /NameError/);
      assert.match(resultText(await python(victim, "x = 1\nx")), /value: 1$/);
    } finally {
      await Promise.all([victim.close(), a.close(), b.close()]);
    }
  });
});
