// The HTTP server's sessions, admission, stateless mode, health/metrics endpoints and drain, in process
// with the official MCP client (the exposure guards are in test/security/, the load test in load.test.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { EventTap, serveHttp } from "../../../src/adapters/mcp/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const sleepCode = (ms: number, value: string) =>
  `await new Promise((r) => setTimeout(r, ${ms})); ${JSON.stringify(value)}`;

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** A raw JSON-RPC POST, for what the client library hides (status, headers). */
function rpc(
  url: string,
  id: number,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
}

/** Waits until a /metrics gauge reads `value`. */
async function gaugeReaches(url: string, name: string, value: number): Promise<void> {
  for (;;) {
    const text = await (await fetch(url.replace("/mcp", "/metrics"))).text();
    if (new RegExp(`^${name} ${value}$`, "m").test(text)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

function run(client: Client, code: string) {
  return client.callTool({ name: "run_code", arguments: { language: "javascript", code } });
}

describe("serveHttp", () => {
  let sandbox: Sandbox;
  const events = new EventTap();
  before(async () => {
    sandbox = await createSandbox({ limits: { timeoutMs: 2_000 }, onEvent: events.listener });
  });
  after(() => sandbox.close());

  test("at maxSessions a new client is refused with 503 + Retry-After; working sessions are never closed", async () => {
    await using server = await serveHttp({ sandbox, maxSessions: 2 });
    const a = await connect(server.url);
    const b = await connect(server.url);
    await assert.rejects(connect(server.url), (e: Error & { code?: number }) => {
      assert.equal(e.code, 503);
      assert.match(e.message, /"reason":"max-sessions"/);
      return true;
    });
    const raw = await rpc(server.url, 9, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "x", version: "1" },
    });
    assert.equal(raw.status, 503);
    assert.match(raw.headers.get("retry-after") ?? "", /^\d+$/);
    const body = (await raw.json()) as { id: number; error: { data: { reason: string } } };
    assert.equal(body.id, 9);
    assert.equal(body.error.data.reason, "max-sessions");
    assert.match(textOf(await run(a, "1 + 1")), /value: 2/);
    assert.match(textOf(await run(b, "2 + 2")), /value: 4/);
    await Promise.all([a.close(), b.close()]);
  });

  test("an idle session expires after the TTL; one in use does not", async () => {
    await using server = await serveHttp({ sandbox, sessionTtlMs: 400 });
    const idle = await connect(server.url);
    const busy = await connect(server.url);
    // busy's call outlasts the TTL twice over; idle makes none.
    assert.match(textOf(await run(busy, sleepCode(1_000, "still here"))), /still here/);
    await assert.rejects(run(idle, "1"), /unknown or expired MCP session|HTTP 404/);
    assert.match(textOf(await run(busy, "'again'")), /again/);
    const metrics = await (await fetch(server.url.replace("/mcp", "/metrics"))).text();
    assert.match(metrics, /wasmcell_mcp_sessions_expired_total [1-9]/);
    await Promise.all([idle.close(), busy.close()]);
  });

  test("a client past its in-flight cap gets 503 for that call only; other clients are unaffected", async () => {
    await using server = await serveHttp({ sandbox, maxInflightPerClient: 2 });
    const greedy = await connect(server.url);
    const other = await connect(server.url);
    const calls = [0, 1, 2].map((i) => run(greedy, sleepCode(300, `g${i}`)));
    const settled = await Promise.allSettled([...calls, run(other, "'other ok'")]);
    const refused = settled.filter((s) => s.status === "rejected");
    assert.equal(refused.length, 1);
    const error = (refused[0] as PromiseRejectedResult).reason as { code?: number; message: string };
    assert.equal(error.code, 503);
    assert.match(error.message, /"reason":"max-inflight-per-client","retryAfterSeconds":1/);
    assert.match(textOf((settled[3] as PromiseFulfilledResult<unknown>).value), /other ok/);
    assert.match(textOf(await run(greedy, "'greedy again'")), /greedy again/);
    const metrics = await (await fetch(server.url.replace("/mcp", "/metrics"))).text();
    assert.match(metrics, /wasmcell_mcp_refusals_total\{reason="max-inflight-per-client"\} 1/);
    await Promise.all([greedy.close(), other.close()]);
  });

  test("stateless: no session id, any request answered; GET is 405", async () => {
    await using server = await serveHttp({ sandbox, stateless: true });
    const client = await connect(server.url);
    assert.equal((client.transport as StreamableHTTPClientTransport).sessionId, undefined);
    assert.match(textOf(await run(client, "6 * 7")), /value: 42/);
    // A second client that never initialized on "this replica" is served the same.
    const bare = await rpc(server.url, 3, "tools/call", {
      name: "run_code",
      arguments: { language: "javascript", code: "'bare'" },
    });
    assert.equal(bare.status, 200);
    assert.equal(bare.headers.get("mcp-session-id"), null);
    assert.match(await bare.text(), /value: \\"bare\\"/);
    assert.equal((await fetch(server.url, { headers: { accept: "text/event-stream" } })).status, 405);
    // A call that asks for progress still streams its output (as SSE) before the result.
    const progress: string[] = [];
    const streamed = await client.callTool(
      { name: "run_code", arguments: { language: "javascript", code: "console.log('tick'); 'done'" } },
      undefined,
      { onprogress: (p) => void progress.push(p.message ?? "") },
    );
    assert.match(textOf(streamed), /value: "done"/);
    assert.deepEqual(progress, ["tick\n"]);
    await client.close();
  });

  test("the tool is built once per serveHttp, not per request or session", async (t) => {
    const described = t.mock.method(sandbox, "describeJavaScriptRuntime");
    for (const stateless of [true, false]) {
      described.mock.resetCalls();
      await using server = await serveHttp({ sandbox, stateless });
      // Building the description reads the runtime's table, so this counts the tool's builds.
      assert.equal(described.mock.callCount(), 1);
      const clients = [await connect(server.url), await connect(server.url)];
      for (const client of clients) {
        assert.deepEqual(
          (await client.listTools()).tools.map((tool) => tool.name),
          ["run_code"],
        );
        assert.match(textOf(await run(client, "1 + 1")), /value: 2/);
      }
      assert.equal(described.mock.callCount(), 1, stateless ? "stateless" : "stateful");
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  test("stateless: each request's calls queue and count as its own client's", async () => {
    await using server = await serveHttp({
      sandbox,
      stateless: true,
      trustProxy: true,
      maxInflightPerClient: 3,
      concurrency: { javascript: 1 },
    });
    const finished: string[] = [];
    const call = (name: string, from: string) =>
      rpc(
        server.url,
        1,
        "tools/call",
        { name: "run_code", arguments: { language: "javascript", code: sleepCode(150, name) } },
        { "x-forwarded-for": from },
      ).then(async (res) => {
        finished.push(name);
        return { status: res.status, body: await res.text() };
      });
    const calls = [call("a1", "10.0.0.1")];
    await gaugeReaches(server.url, "wasmcell_mcp_running_calls", 1);
    calls.push(call("a2", "10.0.0.1"), call("a3", "10.0.0.1"));
    await gaugeReaches(server.url, "wasmcell_mcp_queue_depth", 2);
    // The fourth from the same address is past its cap; another address is not.
    const refused = await call("a4", "10.0.0.1");
    assert.equal(refused.status, 503);
    assert.match(refused.body, /"reason":"max-inflight-per-client"/);
    calls.push(call("b1", "10.0.0.2"));
    await gaugeReaches(server.url, "wasmcell_mcp_queue_depth", 3);
    const answered = await Promise.all(calls);
    for (const [i, name] of ["a1", "a2", "a3", "b1"].entries())
      assert.match(answered[i]!.body, new RegExp(`value: \\\\"${name}\\\\"`));
    // Round-robin across clients: b1 goes before a's backlog, which it would not if the requests
    // shared one gate (one client in the fair queue).
    assert.deepEqual(
      finished.filter((name) => name !== "a4"),
      ["a1", "a2", "b1", "a3"],
    );
  });

  test("a gate is refused, not silently replaced by the server's own queue", async () => {
    const gate = { run: <T>(_l: string, call: () => Promise<T>) => call(), finished: () => undefined };
    await assert.rejects(serveHttp({ sandbox, gate } as Parameters<typeof serveHttp>[0]), (e: Error) => {
      assert.equal(e.name, "InvalidOptionError");
      assert.match(e.message, /gate.*createMcpServer/);
      return true;
    });
  });

  test("stateless refuses session interpreters", async () => {
    await assert.rejects(serveHttp({ sandbox, stateless: true, session: true }), /sticky routing/);
  });

  test("a warm-up that fails is tried again; /readyz says why until it works", async (t) => {
    // The engine could not start (as on a machine too loaded to start a worker in time): once.
    const warm = sandbox.warm.bind(sandbox);
    let failures = 0;
    t.mock.method(sandbox, "warm", async () => {
      if (failures++ === 0) throw new Error("engine could not start: worker start timed out");
      return warm();
    });
    await using server = await serveHttp({ sandbox });
    const readyz = `${server.url.replace("/mcp", "")}/readyz`;
    let first = await fetch(readyz);
    for (let i = 0; i < 50 && (await first.clone().text()) === "warming\n"; i++) {
      await new Promise((r) => setTimeout(r, 20));
      first = await fetch(readyz);
    }
    assert.equal(first.status, 503);
    assert.match(
      await first.text(),
      /^warming: the last try failed \(engine could not start: worker start timed out\); trying again$/m,
    );
    await server.ready;
    const after = await fetch(readyz);
    assert.equal(after.status, 200);
    assert.equal(await after.text(), "ready\n");
    assert.equal(failures, 2);
  });

  test("/healthz, /readyz once warm, /metrics in Prometheus text format", async () => {
    await using server = await serveHttp({ sandbox, events });
    await server.ready;
    const base = server.url.replace("/mcp", "");
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal(await (await fetch(`${base}/readyz`)).text(), "ready\n");
    const client = await connect(server.url);
    await run(client, "1");
    await run(client, "while (true) {}").catch(() => undefined);
    // Restarts are the engine's word, not how calls ended: the loop above was interrupted in its thread
    // (no restart); a builtin that never polls the interrupt gets its worker thread terminated (one).
    const before = await (await fetch(`${base}/metrics`)).text();
    assert.match(before, /^wasmcell_mcp_engine_restarts_total 0$/m);
    await run(client, 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")').catch(() => undefined);
    const res = await fetch(`${base}/metrics`);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^wasmcell_mcp_calls_total\{language="javascript",outcome="ok"\} 1$/m);
    assert.match(text, /^wasmcell_mcp_calls_total\{language="javascript",outcome="timeout"\} 2$/m);
    assert.match(text, /^wasmcell_mcp_call_duration_seconds_count 3$/m);
    assert.match(text, /^wasmcell_mcp_queue_depth 0$/m);
    assert.match(text, /^wasmcell_mcp_engine_restarts_total 1$/m);
    assert.match(text, /^# TYPE wasmcell_mcp_call_duration_seconds histogram$/m);
    await client.close();
  });

  test("drain lets an in-flight call finish, then refuses new connections", async () => {
    const server = await serveHttp({ sandbox });
    const client = await connect(server.url);
    const call = run(client, sleepCode(500, "finished"));
    await new Promise((r) => setTimeout(r, 100));
    const drained = server.drain(5_000);
    assert.match(textOf(await call), /finished/);
    assert.deepEqual(await drained, { waited: 1, cut: 0 });
    await assert.rejects(fetch(server.url.replace("/mcp", "/healthz")));
    await client.close().catch(() => undefined);
  });
});
