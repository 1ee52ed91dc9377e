// The tasks extension (2026-07-28): a run still going after a second, from a client that declared
// `io.modelcontextprotocol/tasks` in its request's capabilities, is answered with a task that
// tasks/get polls to its result and tasks/cancel stops; a short run, or a client that did not declare
// the extension, gets its result in the request. Raw JSON-RPC: the SDK's client has no tasks runtime.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../../src/adapters/mcp/http.ts";

const TASKS = "io.modelcontextprotocol/tasks";
const sleepCode = (ms: number, value: string) =>
  `await new Promise((r) => setTimeout(r, ${ms})); ${JSON.stringify(value)}`;

describe("MCP tasks (2026-07-28)", () => {
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  before(async () => {
    sandbox = await createSandbox({ limits: { timeoutMs: 20_000 } });
    server = await serveHttp({ sandbox });
    await server.ready;
  });
  after(async () => {
    await server?.close();
    await sandbox?.close();
  });

  /** A 2026-07-28 request; `tasks`: whether its capabilities declare the extension. */
  async function post(method: string, params: Record<string, unknown>, name: string, tasks = true) {
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS]: {} } } : {},
    };
    const res = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta } }),
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { result?: Record<string, unknown>; error?: { message: string } };
  }
  const run = (code: string, tasks = true) =>
    post("tools/call", { name: "run_code", arguments: { language: "javascript", code } }, "run_code", tasks);
  const get = (taskId: string) => post("tasks/get", { taskId }, taskId);
  const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

  test("server/discover offers the extension", async () => {
    const { result } = await post("server/discover", {}, "server/discover");
    assert.deepEqual((result!.capabilities as { extensions: object }).extensions, { [TASKS]: {} });
  });

  test("a long run becomes a task that tasks/get polls to its result; a short one is answered at once", async () => {
    const short = await run("6 * 7");
    assert.equal(short.result!.resultType, "complete");
    assert.match(text(short.result), /value: 42/);
    const long = await run(sleepCode(2500, "slow"));
    assert.equal(long.result!.resultType, "task");
    const taskId = long.result!.taskId as string;
    assert.match(taskId, /^[0-9a-f]{32}$/);
    assert.equal(long.result!.status, "working");
    let task: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) {
      task = (await get(taskId)).result!;
      if (task.status !== "working") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(task.status, "completed");
    assert.match(text(task.result), /value: "slow"/);
  });

  test("without the extension declared, a long run is answered in its request", async () => {
    const long = await run(sleepCode(1500, "waited"), false);
    assert.equal(long.result!.resultType, "complete");
    assert.match(text(long.result), /value: "waited"/);
  });

  test("tasks/cancel stops a running task; an unknown task id is an error", async () => {
    const long = await run(sleepCode(15_000, "never"));
    const taskId = long.result!.taskId as string;
    const cancelled = await post("tasks/cancel", { taskId }, taskId);
    assert.equal(cancelled.result!.status, "cancelled");
    assert.equal((await get(taskId)).result!.status, "cancelled");
    const unknown = await get("0".repeat(32));
    assert.match(unknown.error!.message, /no task/);
  });
});
