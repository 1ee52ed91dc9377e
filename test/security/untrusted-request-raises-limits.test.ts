// Threat: someone who is not the operator — a queue job's author (or anyone who can write to the
// queue's Redis), an MCP client, a model calling the AI SDK tool — asks for more than the operator
// set: more memory, a later deadline, more output, every limit at the schema's maximum, or an engine
// the operator did not offer (the native tier on a worker configured for Pyodide). The operator's
// settings are ceilings: a request may ask for less, never more, and anything above is refused before
// it runs, with an error naming the field, the value asked and the ceiling. A request's network may
// only narrow the operator's. Each face is driven from outside, as its attacker would: a queue job (a
// real redis-server on loopback; the client's, a raw BullMQ job, and one to a `wasmcell worker`
// process), MCP `run_code` arguments in process and over HTTP, and the AI SDK tool's input.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { generateText, isStepCount } from "ai";
import { Queue } from "bullmq";
import { runCodeTool } from "../../src/adapters/ai/index.ts";
import { createMcpServer, serveHttp } from "../../src/adapters/mcp/index.ts";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { createSandbox } from "../../src/index.ts";
import { createQueueClient, createWorker, type QueueClient, type QueueWorker } from "../../src/queue/index.ts";
import type { Sandbox } from "../../src/sandbox.ts";
import type { Limits } from "../../src/core/types.ts";
import { scriptedModel } from "../adapters/ai/scripted-model.ts";
import { startWorker } from "../helpers/queue-worker.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

/** The operator's settings on every face below. */
const OPERATOR = { memoryMb: 32, timeoutMs: 10_000 } as const;
/** Every limit at the schema's maximum (src/options/limits.ts). */
const SCHEMA_MAXIMA: Limits = {
  timeoutMs: 24 * 3600 * 1000,
  memoryMb: 4096,
  maxOutputBytes: 1 << 30,
  maxResultBytes: 1 << 30,
  maxStackKb: 64 * 1024,
  maxTimers: 1_000_000,
  maxHostCalls: 1_000_000,
  maxFiles: 10_000,
  maxFileBytes: 1 << 30,
  maxCodeBytes: 64 << 20,
  maxResults: 10_000,
  maxDisplayItemBytes: 1 << 30,
  maxDisplayBytes: 1 << 30,
};
/** 2e6 objects: well past 32 MB in QuickJS, well within 1024 MB. */
const ALLOCATE = "const a = []; for (let i = 0; i < 2e6; i++) a.push({ i }); a.length";
/** Past 32 MB within a few hundred steps: proves the operator's cap holds without racing its deadline. */
const BOMB = "const a = []; for (;;) a.push(new Array(4096).fill(0))";

/** The refusal: InvalidOptionError on `field`, naming the value asked and the ceiling. */
function refused(field: string, asked: number | string, ceiling: number | string) {
  return (e: unknown) =>
    e instanceof InvalidOptionError &&
    e.field === field &&
    e.message.includes(String(asked)) &&
    e.message.includes(String(ceiling));
}

describe("a queue job asks for more than the worker's operator set", { timeout: 120_000 }, () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let worker: QueueWorker;
  let client: QueueClient;

  before(async () => {
    redis = await startRedis();
    sandbox = await createSandbox({
      limits: OPERATOR,
      javascript: { workers: 1, maxWorkers: 1 },
      python: { engine: "pyodide", pool: 1, prewarm: false },
      network: { allow: ["api.example.com"], maxRequests: 4 },
    });
    // A lock long enough for the schema's longest deadline: only the ceiling can refuse it.
    worker = await createWorker({ redis: redis.url, sandbox, lockDurationMs: SCHEMA_MAXIMA.timeoutMs + 3_000 });
    client = await createQueueClient({ redis: redis.url, waitMs: 60_000 });
  });
  after(async () => {
    await client?.close();
    await worker?.close();
    await sandbox?.close();
    await redis?.stop();
  });

  it("more memory than --memory-mb: refused, naming memoryMb, 1024 and 32", async () => {
    await assert.rejects(
      client.run({ language: "javascript", code: ALLOCATE, limits: { memoryMb: 1024 } }),
      refused("request.limits.memoryMb", 1024, 32),
    );
    // Under the operator's cap an allocation bomb is a memory failure: the cap is real.
    const capped = await client.run({ language: "javascript", code: BOMB });
    assert.equal(!capped.ok && capped.error.kind, "memory");
  });

  it("more output than the operator's maxOutputBytes: refused before 6 MB crosses Redis", async () => {
    await assert.rejects(
      client.run({
        language: "javascript",
        code: "console.log('x'.repeat(6e6))",
        limits: { maxOutputBytes: 16 << 20 },
      }),
      refused("request.limits.maxOutputBytes", 16 << 20, 64 * 1024),
    );
  });

  it("a later deadline than the operator's: refused", async () => {
    await assert.rejects(
      client.run({ language: "javascript", code: "1", limits: { timeoutMs: 30_000 } }),
      refused("request.limits.timeoutMs", 30_000, 10_000),
    );
  });

  it("a raw BullMQ job with every limit at the schema's maximum: refused, nothing runs", async () => {
    const raw = new Queue("wasmcell-runs", { connection: { url: redis.url }, prefix: "wasmcell" });
    try {
      const data = { v: 1, tenant: "mallory", request: { language: "javascript", code: "1", limits: SCHEMA_MAXIMA } };
      await raw.add("run", data, { jobId: "r.raw-maxima", attempts: 1 });
      await assert.rejects(client.result("raw-maxima"), (e: unknown) => {
        return e instanceof InvalidOptionError && e.field.startsWith("request.limits.");
      });
      // Each limit alone is refused too, whichever the worker checks first.
      for (const [field, value] of Object.entries(SCHEMA_MAXIMA)) {
        const one = { ...data, request: { ...data.request, limits: { [field]: value } } };
        await raw.add("run", one, { jobId: `r.raw-${field}`, attempts: 1 });
        await assert.rejects(client.result(`raw-${field}`), (e: unknown) => {
          return e instanceof InvalidOptionError && e.field === `request.limits.${field}`;
        });
      }
    } finally {
      await raw.close();
    }
  });

  it('{ language: "python", engine: "native" } on a worker configured for Pyodide: refused', async () => {
    await assert.rejects(
      client.run({ language: "python", engine: "native", code: "import os; os.uname().sysname" }),
      refused("request.engine", "native", "pyodide"),
    );
  });

  it("asking for less is served: a lower deadline ends a loop as timeout", async () => {
    const loop = await client.run({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 200 } });
    assert.equal(!loop.ok && loop.error.kind, "timeout");
    const ok = await client.run({
      language: "javascript",
      code: "6 * 7",
      limits: { memoryMb: 16, maxOutputBytes: 10 },
    });
    assert.equal(ok.ok && ok.value, 42);
  });

  it("the network only narrows: wider hosts or caps are refused, a narrower network is served", async () => {
    await assert.rejects(
      client.run({ language: "javascript", code: "1", network: { allow: ["evil.example"] } }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "request.network.allow[0]",
    );
    await assert.rejects(
      client.run({ language: "javascript", code: "1", network: { maxRequests: 1_000 } }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "request.network.maxRequests",
    );
    const narrow = await client.run({
      language: "javascript",
      code: "typeof fetch",
      network: { allow: ["api.example.com"], maxRequests: 1 },
    });
    assert.equal(narrow.ok && narrow.value, "function");
    const none = await client.run({ language: "javascript", code: "typeof fetch", network: false });
    assert.equal(none.ok && none.value, "undefined");
  });
});

describe("a queue job to `wasmcell worker --memory-mb 32`", { timeout: 120_000 }, () => {
  it("asking for 1024 MB is refused by the worker process", async () => {
    const redis = await startRedis();
    const worker = await startWorker(redis.url, ["--memory-mb", "32", "--js-workers", "1"]);
    const client = await createQueueClient({ redis: redis.url, waitMs: 60_000 });
    try {
      await assert.rejects(
        client.run({ language: "javascript", code: ALLOCATE, limits: { memoryMb: 1024 } }),
        refused("request.limits.memoryMb", 1024, 32),
      );
    } finally {
      await client.close();
      worker.child.kill("SIGTERM");
      await worker.exited;
      await redis.stop();
    }
  });
});

// The model-facing faces take only `language`, `code` and `files` (and `session`) from the model:
// limits, engine, network and host functions are the application's. An argument that names any of
// them is refused before anything runs, and every run gets the operator's limits.
const ASKING_FOR_MORE: Record<string, unknown>[] = [
  { language: "javascript", code: ALLOCATE, limits: { memoryMb: 1024 } },
  { language: "javascript", code: "1", timeoutMs: 60_000 },
  { language: "python", code: "1", engine: "native" },
  { language: "javascript", code: "1", network: { allow: ["evil.example"] } },
  { language: "javascript", code: "1", hostFunctions: { x: 1 } },
];

const textOf = (r: CallToolResult) =>
  r.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

describe("a model's tool call asks for more than the application set", { timeout: 120_000 }, () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: OPERATOR, javascript: { workers: 1, maxWorkers: 1 } });
  });
  after(() => sandbox?.close());

  it("MCP run_code arguments: refused as unknown arguments, nothing runs; runs keep the operator's cap", async () => {
    const server = createMcpServer({ sandbox });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "mallory", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
    try {
      for (const args of ASKING_FOR_MORE) {
        const r = (await client.callTool({ name: "run_code", arguments: args })) as CallToolResult;
        assert.equal(r.isError, true, JSON.stringify(args));
        assert.match(textOf(r), /unknown argument.*Nothing was run/s);
      }
      const capped = (await client.callTool({
        name: "run_code",
        arguments: { language: "javascript", code: BOMB },
      })) as CallToolResult;
      assert.match(textOf(capped), /32 MB memory limit/);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("MCP over HTTP: the same arguments are refused; runs keep the operator's cap", async () => {
    await using server = await serveHttp({ sandbox, stateless: true });
    const call = async (args: Record<string, unknown>) => {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "run_code", arguments: args },
        }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { result: CallToolResult }).result;
    };
    for (const args of ASKING_FOR_MORE) {
      const r = await call(args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(textOf(r), /unknown argument.*Nothing was run/s);
    }
    assert.match(textOf(await call({ language: "javascript", code: BOMB })), /32 MB memory limit/);
  });

  it("AI SDK run_code tool input (generateText, a scripted model): refused; runs keep the operator's cap", async () => {
    const calls = [...ASKING_FOR_MORE, { language: "javascript", code: BOMB }];
    const model = scriptedModel([...calls.map((input) => ({ call: "run_code", input })), { say: () => "done" }]);
    await using tool = runCodeTool({ sandbox });
    await generateText({ model, tools: { run_code: tool }, stopWhen: isStepCount(calls.length + 1), prompt: "more" });
    // model.seen[i + 1]: what the model read back after its call i.
    for (const [i, input] of ASKING_FOR_MORE.entries()) {
      const seen = model.seen[i + 1]![0]!;
      assert.equal(seen.type, "error-text", JSON.stringify(input));
      assert.match(seen.text, /unknown argument.*Nothing was run/s);
    }
    assert.match(model.seen[calls.length]![0]!.text, /32 MB memory limit/);
  });
});
