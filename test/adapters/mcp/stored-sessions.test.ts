// Stored MCP sessions (serveHttp with a sessionStore, `wasmcell mcp --session --session-store/--redis`):
// a chain continues after the server process is killed and started again on the same store
// directory (over HTTP, and over stdio under a --session-name); two replicas sharing Redis never run
// one session at once (seen from the guest: every call's start and end stay paired in the session's
// own list, none lost); fork_session copies a session that then diverges; a call cancelled while it
// waits for the lock never runs; and what cannot move says so instead of starting over silently.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../../src/adapters/mcp/http.ts";
import { SessionIds } from "../../../src/adapters/mcp/session-ids.ts";
import { StoredSessions } from "../../../src/adapters/mcp/stored-sessions.ts";
import { SessionBusyError } from "../../../src/core/errors.ts";
import { DiskSessionStore, MemorySessionStore } from "../../../src/stores/index.ts";
import { connectClient, freePort, resultText, startReplica, type Replica } from "../../helpers/mcp-http.ts";
import { redisAvailable, startRedis } from "../../helpers/redis.ts";
import { SESSION_KEY, callRetrying, chainStep, chainValue } from "../../helpers/stored-sessions.ts";

process.env.WASMCELL_SESSION_KEY = SESSION_KEY;
const MAIN = fileURLToPath(new URL("../../../src/cli/main.ts", import.meta.url));

const run = async (client: Client, args: Record<string, unknown>) =>
  resultText(await client.callTool({ name: "run_code", arguments: args }));

describe("stored sessions in one process (a memory store)", () => {
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1 } });
    server = await serveHttp({ sandbox, session: true, sessionStore: new MemorySessionStore() });
  });
  after(async () => {
    await server?.close();
    await sandbox?.close();
  });

  test("run_code takes a session, fork_session copies one, and the copy diverges", async () => {
    const client = await connectClient(server.url);
    const tools = (await client.listTools()).tools;
    assert.deepEqual(
      tools.map((t) => t.name),
      ["run_code", "fork_session"],
    );
    assert.ok("session" in (tools[0]!.inputSchema.properties ?? {}));
    assert.match(await run(client, { language: "python", code: "x = 1\nx" }), /value: 1$/);
    const forked = (await client.callTool({
      name: "fork_session",
      arguments: { language: "python" },
    })) as CallToolResult;
    const id = (forked.structuredContent as { session: string }).session;
    assert.match(resultText(forked), new RegExp(id));
    assert.match(await run(client, { language: "python", code: "x += 100\nx", session: id }), /value: 101$/);
    assert.match(await run(client, { language: "python", code: "x += 1\nx" }), /value: 2$/);
    assert.match(await run(client, { language: "python", code: "x", session: id }), /value: 101$/);
    // Nothing to fork yet, and a session id that is not one: refused, naming the problem.
    const none = (await client.callTool({
      name: "fork_session",
      arguments: { language: "typescript" },
    })) as CallToolResult;
    assert.equal(none.isError, true);
    assert.match(resultText(none), /no typescript session to fork yet/);
    assert.match(await run(client, { language: "python", code: "1", session: "../x" }), /session must be a session id/);
    await client.close();
  });

  test("a call cancelled while it waits for the session's lock never runs", async () => {
    const stored = new StoredSessions({
      sandbox,
      store: new MemorySessionStore(),
      pythonEngine: "pyodide",
      leaseMs: 10_000,
      waitMs: 60_000,
      maxLive: 4,
      idleMs: 60_000,
      ids: new SessionIds(sandbox.options.sessions.key),
      quotaBytes: 1 << 20,
    });
    try {
      const first = stored.run("held", "held", {
        language: "javascript",
        code: "globalThis.n = 1; const end = Date.now() + 1000; while (Date.now() < end); n",
      });
      const controller = new AbortController();
      const cancelled = stored.run("held", "held", {
        language: "javascript",
        code: "n = 999",
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(new Error("the client cancelled")), 100);
      await assert.rejects(cancelled, (e: unknown) => e instanceof SessionBusyError && e.reason === "aborted");
      const r = await first;
      assert.ok(r.ok && r.value === 1);
      const after = await stored.run("held", "held", { language: "javascript", code: "n" });
      assert.ok(after.ok && after.value === 1, "the cancelled call's code did not run");
    } finally {
      await stored.close();
    }
  });

  test("a sessionStore that cannot work is refused, naming the field", async () => {
    const store = new MemorySessionStore();
    await assert.rejects(serveHttp({ sandbox, sessionStore: store }), /sessionStore: .*needs session: true/);
    await assert.rejects(serveHttp({ sandbox, session: true, stateless: true, sessionStore: store }), /stateless: /);
    // A store another process reads, with the per-process key: no other process could resume it.
    const dir = mkdtempSync(join(tmpdir(), "wasmcell-mcp-nokey-"));
    try {
      await assert.rejects(
        serveHttp({ sandbox, session: true, sessionStore: new DiskSessionStore({ dir }) }),
        /sessionStore: .*sessions\.key/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await assert.rejects(
      serveHttp({ sandbox, session: true, sessionStore: store, sessionLeaseMs: 0 }),
      /sessionLeaseMs: must be a positive integer/,
    );
  });

  test("an Mcp-Session-Id this server did not issue is refused; DELETE ends the session and retires its id", async () => {
    const bad = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": "x/../y",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(bad.status, 404);
    const client = await connectClient(server.url);
    assert.match(await run(client, { language: "python", code: "gone = 7\ngone" }), /value: 7$/);
    const transport = client.transport as StreamableHTTPClientTransport;
    const id = transport.sessionId!;
    await transport.terminateSession();
    // The id is retired with its session: replayed, it is refused, never a fresh session under the old name.
    const again = new Client({ name: "again", version: "1" });
    await again.connect(new StreamableHTTPClientTransport(new URL(server.url), { sessionId: id }));
    await assert.rejects(run(again, { language: "python", code: "gone" }), /this MCP session was closed/);
    await again.close();
    await client.close();
  });
});

describe("a session survives a server restart with --session-store", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-mcp-store-"));
  let server: Replica | undefined;
  after(() => {
    server?.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  test("killed and started again on the same store: the client's chain carries on", async () => {
    const port = await freePort();
    const flags = ["--session", "--session-store", dir, "--timeout-ms", "10000"];
    server = await startReplica(flags, port);
    const client = await connectClient(server.url, "restart");
    for (let i = 0; i < 3; i++) {
      assert.equal(chainValue(await run(client, { language: "python", code: chainStep("python", i) }))?.length, i + 1);
    }
    assert.equal(
      chainValue(await run(client, { language: "javascript", code: chainStep("javascript", 0) }))?.length,
      1,
    );
    server.child.kill("SIGKILL");
    await server.exited;
    server = await startReplica(flags, port);
    for (let i = 3; i < 6; i++) {
      const { text } = await callRetrying(client, { language: "python", code: chainStep("python", i) });
      assert.deepEqual(chainValue(text), { length: i + 1, sum: (i * (i + 1)) / 2, runs: i + 1 }, text);
    }
    const js = await run(client, { language: "javascript", code: chainStep("javascript", 1) });
    // The JavaScript session came back from its snapshot too, in the restarted process.
    assert.equal(chainValue(js)?.length, 2, js);
    await client.close();
  });
});

describe("a stdio server's session survives a restart with --session-store", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-mcp-stdio-store-"));
  // Every client is closed at the end, so a failed assertion ends the test instead of leaving a
  // server on an open stdin (and the test process waiting on it).
  const clients: Client[] = [];
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const launch = async (name: string) => {
    const client = new Client({ name: "stdio-restart", version: "1" });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "mcp", "--session", "--session-store", dir, "--session-name", name, "--timeout-ms", "10000"],
        env: { ...(process.env as Record<string, string>), WASMCELL_SESSION_KEY: SESSION_KEY },
        stderr: "pipe",
      }),
    );
    return client;
  };

  test("the client restarts the server: the same name continues, fork_session works, another name is fresh", async () => {
    let client = await launch("agent-1");
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ["run_code", "fork_session"],
    );
    for (let i = 0; i < 2; i++)
      assert.equal(chainValue(await run(client, { language: "python", code: chainStep("python", i) }))?.length, i + 1);
    assert.match(await run(client, { language: "javascript", code: "globalThis.y = 'kept'; y" }), /value: "kept"$/);
    // A sequence the guest seeded carries on through the restart (the resume is the same session).
    assert.match(
      await run(client, { language: "python", code: "import random\nrandom.seed(3)\nrr = [random.random()]\nlen(rr)" }),
      /value: 1$/,
    );
    const forked = (await client.callTool({
      name: "fork_session",
      arguments: { language: "python" },
    })) as CallToolResult;
    const fork = (forked.structuredContent as { session: string }).session;
    await client.close(); // the server's stdin closes: it exits

    client = await launch("agent-1");
    const { text } = await callRetrying(client, { language: "python", code: chainStep("python", 2) });
    assert.deepEqual(chainValue(text), { length: 3, sum: 3, runs: 3 }, text);
    assert.match(await run(client, { language: "javascript", code: "y" }), /value: "kept"$/);
    assert.match(
      await run(client, {
        language: "python",
        code: "rr.append(random.random())\nrandom.seed(3)\nrr == [random.random(), random.random()]",
      }),
      /value: true$/i,
    );
    assert.equal(
      chainValue(await run(client, { language: "python", code: chainStep("python", 2), session: fork }))?.length,
      3,
    );
    await client.close();

    client = await launch("agent-2");
    assert.match(await run(client, { language: "python", code: "'log' in globals()" }), /value: false$/);
    await client.close();
  });
});

describe("the session lock across two replicas sharing Redis", () => {
  test("concurrent calls on one session from two replicas never run at once", async (t) => {
    if (!redisAvailable()) assert.fail("redis-server is not installed (apt-get install redis-server)");
    const redis = await startRedis();
    t.after(() => redis.stop());
    const flags = ["--session", "--redis", redis.url, "--session-wait-ms", "60000", "--timeout-ms", "10000"];
    const replicas = await Promise.all([startReplica(flags), startReplica(flags)]);
    t.after(() => replicas.forEach((r) => r.child.kill("SIGKILL")));
    const a = await connectClient(replicas[0].url, "a");
    const id = (a.transport as StreamableHTTPClientTransport).sessionId!;
    // The same MCP session, reached through the other replica.
    const b = new Client({ name: "b", version: "1" });
    await b.connect(new StreamableHTTPClientTransport(new URL(replicas[1].url), { sessionId: id }));
    await run(a, { language: "python", code: "import time\ntrail = []" });
    // Each call writes its start, spins 150 ms, writes its end: two calls at once would interleave
    // (or, each resuming the same snapshot, one would lose the other's entries).
    const step = (tag: string) =>
      `trail.append("start ${tag}")\nt0 = time.time()\nwhile time.time() - t0 < 0.15: pass\ntrail.append("end ${tag}")\nlen(trail)`;
    const tags = Array.from({ length: 6 }, (_, i) => [`a${i}`, `b${i}`]).flat();
    const texts = await Promise.all(
      tags.map((tag) => run(tag.startsWith("a") ? a : b, { language: "python", code: step(tag) })),
    );
    for (const text of texts) assert.match(text, /^ok/, text);
    const joined = await run(a, { language: "python", code: '"|".join(trail)' });
    const trail = /value: ["']?([^"']*)["']?$/.exec(joined)![1]!.split("|");
    assert.equal(trail.length, tags.length * 2);
    for (let i = 0; i < trail.length; i += 2) {
      const tag = trail[i]!.replace("start ", "");
      assert.equal(trail[i + 1], `end ${tag}`, JSON.stringify(trail));
    }
    assert.deepEqual(new Set(trail.filter((e) => e.startsWith("start")).map((e) => e.slice(6))), new Set(tags));
    await a.close();
    await b.close();
  });
});
