// Both MCP revisions against `wasmcell mcp` as a child process: a 2026-07-28 client (SDK v2, pinned,
// no fallback) lists tools and runs code over HTTP and stdio, gets log lines only when its request
// names a log level, and carries a Python session's handle across a server restart with
// --session-store; a 2025-11-25 client (SDK v1) resuming its Mcp-Session-Id on the restarted server
// lists the tools and finds its state.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, test } from "node:test";
import { Client as ModernClient, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { traceparentOf } from "../../../src/adapters/mcp/trace.ts";
import { freePort, resultText, startReplica, type Replica } from "../../helpers/mcp-http.ts";
import { callModern, connectModern, MODERN } from "../../helpers/mcp-v2.ts";
import { SESSION_KEY } from "../../helpers/stored-sessions.ts";

process.env.WASMCELL_SESSION_KEY = SESSION_KEY;
const MAIN = fileURLToPath(new URL("../../../src/cli/main.ts", import.meta.url));
const FLAGS = ["--timeout-ms", "5000"];

describe("a 2026-07-28 client", () => {
  let server: Replica | undefined;
  after(() => void server?.child.kill("SIGKILL"));

  test("over HTTP: server/discover, tools, JavaScript and Python, log lines only when asked", async () => {
    server = await startReplica(FLAGS);
    const client = await connectModern(server.url);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual(client.getDiscoverResult()?.supportedVersions, [MODERN]);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ["run_code"],
      );
      const logs: string[] = [];
      client.setNotificationHandler("notifications/message", (n) => void logs.push(String(n.params.data)));
      const js = await callModern(client, "run_code", { language: "javascript", code: "console.log('out'); 6 * 7" });
      assert.match(js.text, /value: 42/);
      assert.deepEqual(logs, [], "no log level in the request: no log lines");
      const py = await callModern(
        client,
        "run_code",
        { language: "python", code: "import sys\nprint('out')\nprint('err', file=sys.stderr)\n2 ** 8" },
        { [LOG_LEVEL_META_KEY]: "warning" },
      );
      assert.match(py.text, /value: 256/);
      assert.deepEqual(logs, ["err\n"], "level warning: stderr's lines (warning), not stdout's (info)");
    } finally {
      await client.close();
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });

  test("over stdio", async () => {
    const client = new ModernClient({ name: "t", version: "1" }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, "mcp", ...FLAGS] }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual(
        (await client.listTools()).tools.map((t) => t.name),
        ["run_code"],
      );
      assert.match((await callModern(client, "run_code", { language: "python", code: "40 + 2" })).text, /value: 42/);
    } finally {
      await client.close();
    }
  });
});

test("over stdio with --session and no store: handles name sessions kept in the server process", async () => {
  const client = new ModernClient({ name: "t", version: "1" }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [MAIN, "mcp", "--session", ...FLAGS] }),
  );
  try {
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ["run_code", "fork_session", "close_session"],
    );
    const first = await callModern(client, "run_code", { language: "python", code: "total = 40\ntotal" });
    const next = await callModern(client, "run_code", {
      language: "python",
      code: "total += 2\ntotal",
      session: first.session,
    });
    assert.match(next.text, /value: 42/);
    // No handle: a new session, which has no `total`.
    const fresh = await callModern(client, "run_code", { language: "python", code: "'total' in globals()" });
    assert.match(fresh.text, /value: false/);
    assert.notEqual(fresh.session, first.session);
  } finally {
    await client.close();
  }
});

describe("sessions across a restart with --session --session-store", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-mcp-revisions-"));
  let server: Replica | undefined;
  const started: Replica[] = [];
  after(() => {
    for (const r of started) r.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (port: number) => {
    server = await startReplica(["--session", "--session-store", dir, ...FLAGS], port);
    started.push(server);
    return server;
  };
  const restart = async (port: number) => {
    server!.child.kill("SIGKILL");
    await server!.exited;
    return start(port);
  };

  test("a 2026-07-28 handle carries a Python session: total = 40, total += 2, 42", async () => {
    const port = await freePort();
    let s = await start(port);
    let client = await connectModern(s.url);
    const first = await callModern(client, "run_code", { language: "python", code: "total = 40\ntotal" });
    assert.match(first.text, /value: 40/);
    const handle = first.session!;
    assert.match(handle, /^wc_/);
    await client.close();
    s = await restart(port);
    client = await connectModern(s.url);
    const next = await callModern(client, "run_code", {
      language: "python",
      code: "total += 2\ntotal",
      session: handle,
    });
    assert.match(next.text, /value: 42/);
    assert.equal(next.session, handle);
    await client.close();
  });

  test("a 2025-11-25 client resumes its Mcp-Session-Id on the restarted server: tools/list and state", async () => {
    const port = await freePort();
    let s = await start(port);
    const client = new Client({ name: "v1", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
    const id = (client.transport as StreamableHTTPClientTransport).sessionId!;
    assert.match(
      resultText(await client.callTool({ name: "run_code", arguments: { language: "python", code: "total = 40" } })),
      /^ok/,
    );
    // Closed without ending the session (a DELETE would retire it): the client only goes away.
    await client.transport?.close();
    s = await restart(port);
    const again = new Client({ name: "v1", version: "1" });
    await again.connect(new StreamableHTTPClientTransport(new URL(s.url), { sessionId: id }));
    assert.deepEqual(
      (await again.listTools()).tools.map((t) => t.name),
      ["run_code", "fork_session"],
    );
    const r = await again.callTool({ name: "run_code", arguments: { language: "python", code: "total += 2\ntotal" } });
    assert.match(resultText(r), /value: 42/);
    // The same stored session is reachable from 2026-07-28 by the same name.
    const modern = await connectModern(s.url);
    assert.match(
      (await callModern(modern, "run_code", { language: "python", code: "total", session: id })).text,
      /value: 42/,
    );
    await Promise.all([again.close(), modern.close()]);
  });
});

test("only a well-formed W3C traceparent from _meta is passed to the run", () => {
  const good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  assert.equal(traceparentOf({ traceparent: good }), good);
  for (const bad of [
    "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "00-00000000000000000000000000000000-b7ad6b7169203331-01",
    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
    `${good}x`,
    42,
  ])
    assert.equal(traceparentOf({ traceparent: bad }), undefined, String(bad));
  assert.equal(traceparentOf(undefined), undefined);
});
