// The queue end to end against a real redis-server (started by the test on loopback): a client's run
// comes back with sandbox.run's shapes and error taxonomy from an in-process worker; what crosses Redis
// is checked both ways (the stored reply and the one published on the replies channel); the
// lock-duration check refuses a worker whose deadline does not fit.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Worker as BullWorker } from "bullmq";
import { Redis } from "ioredis";
import { createSandbox } from "../../src/index.ts";
import { InvalidOptionError, QueueWaitError, WasmcellError } from "../../src/core/errors.ts";
import { createQueueClient, createWorker, type QueueClient, type QueueWorker } from "../../src/queue/index.ts";
import type { Sandbox } from "../../src/sandbox.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let redis: RedisServer;
let sandbox: Sandbox;
let worker: QueueWorker;
let client: QueueClient;

before(async () => {
  redis = await startRedis();
  sandbox = await createSandbox({ limits: { timeoutMs: 2_000 }, javascript: { workers: 1, maxWorkers: 2 } });
  worker = await createWorker({ redis: redis.url, sandbox, lockDurationMs: 10_000 });
  client = await createQueueClient({ redis: redis.url, waitMs: 20_000 });
});
after(async () => {
  await client?.close();
  await worker?.close();
  await sandbox?.close();
  await redis?.stop();
});

describe("queue: a run through Redis answers like sandbox.run", () => {
  it("returns the value, output and files a direct run would", async () => {
    const code = `fs.writeFileSync("out.bin", fs.readFileSync("in.bin")); console.log("hi"); ({ n: 2n ** 70n, m: new Map([[1, new Date(0)]]), u: undefined, bytes: new Uint8Array([1, 2]) })`;
    const request = { language: "javascript" as const, code, files: { "in.bin": new Uint8Array([7, 8, 9]) } };
    const direct = await sandbox.run(request);
    const queued = await client.run(request);
    assert.equal(queued.ok, true, !queued.ok ? queued.error.message : "");
    assert.deepEqual(queued.ok && queued.value, direct.ok && direct.value);
    assert.equal(queued.stdout, "hi\n");
    assert.deepEqual(
      queued.files.map((f) => [f.path, [...f.bytes]]),
      direct.files.map((f) => [f.path, [...f.bytes]]),
    );
    assert.deepEqual([...(queued.files[0]?.bytes ?? [])], [7, 8, 9]);
  });

  it("returns guest failures as results with the same error kind", async () => {
    const thrown = await client.run({ language: "javascript", code: "throw new TypeError('no')" });
    assert.equal(thrown.ok, false);
    assert.equal(!thrown.ok && thrown.error.kind, "runtime");
    const loop = await client.run({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 200 } });
    assert.equal(!loop.ok && loop.error.kind, "timeout");
  });

  it("throws the same typed error for a bad request, on the client before anything is queued", async () => {
    await assert.rejects(client.run({ language: "cobol" } as never), InvalidOptionError);
    await assert.rejects(
      client.run({ language: "javascript", code: "1", hostFunctions: {} } as never),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "request.hostFunctions",
    );
  });

  it("throws the worker's typed error for a request the worker refuses (a timeout past its ceiling)", async () => {
    await assert.rejects(
      client.run({ language: "javascript", code: "1", limits: { timeoutMs: 60_000 } }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "request.limits.timeoutMs",
    );
    await assert.rejects(
      client.run({ language: "javascript", code: "1 + 1", limits: { maxCodeBytes: 1 } }),
      (e: unknown) => e instanceof WasmcellError && e.code === "INVALID_OPTION",
    );
  });

  it("runs one idempotency key once: a second enqueue of the same id adds nothing", async () => {
    const code = "globalThis.n = (globalThis.n ?? 0) + 1; export default Date.now()";
    const a = await client.enqueue({ language: "javascript", code }, { id: "same-key" });
    const first = await client.result(a);
    const b = await client.enqueue({ language: "javascript", code: "export default 'other'" }, { id: "same-key" });
    const second = await client.result(b);
    assert.deepEqual(second.ok && second.value, first.ok && first.value);
  });

  it("a result id nobody enqueued is a clear error", async () => {
    await assert.rejects(client.result("never-enqueued"), /no job "never-enqueued"/);
  });
});

describe("queue: a worker whose deadline does not fit its lock is refused at start-up", () => {
  it("names lockDurationMs and the numbers", async () => {
    await assert.rejects(
      createWorker({ redis: redis.url, sandbox, lockDurationMs: 2_500 }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "lockDurationMs" && /2000 ms/.test(e.message),
    );
  });
});

describe("queue: the operator may offer jobs more than the sandbox's defaults", () => {
  it("maxLimits raises a ceiling, and must fit the lock", async () => {
    const generous = await createWorker({
      redis: redis.url,
      queue: "generous",
      sandbox,
      lockDurationMs: 10_000,
      maxLimits: { timeoutMs: 5_000 },
    });
    const asking = await createQueueClient({ redis: redis.url, queue: "generous", waitMs: 20_000 });
    try {
      const slow = await asking.run({
        language: "javascript",
        code: "await new Promise((r) => setTimeout(r, 2_500)); 'late'",
        limits: { timeoutMs: 4_000 },
      });
      assert.equal(slow.ok && slow.value, "late");
      // Asking for nothing gets the sandbox's 2000 ms, not the ceiling.
      const plain = await asking.run({
        language: "javascript",
        code: "await new Promise((r) => setTimeout(r, 2_500))",
      });
      assert.equal(!plain.ok && plain.error.kind, "timeout");
      await assert.rejects(
        asking.run({ language: "javascript", code: "1", limits: { timeoutMs: 5_001 } }),
        (e: unknown) => e instanceof InvalidOptionError && e.field === "request.limits.timeoutMs",
      );
    } finally {
      await asking.close();
      await generous.close();
    }
    await assert.rejects(
      createWorker({ redis: redis.url, sandbox, lockDurationMs: 10_000, maxLimits: { timeoutMs: 8_000 } }),
      (e: unknown) =>
        e instanceof InvalidOptionError &&
        e.field === "lockDurationMs" &&
        /maxLimits.timeoutMs 8000 ms/.test(e.message),
    );
    await assert.rejects(
      createWorker({ redis: redis.url, sandbox, maxLimits: { memoryMb: 1 } }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "maxLimits.memoryMb",
    );
    await assert.rejects(
      createWorker({ redis: redis.url, sandbox, pythonEngines: ["native"] }),
      (e: unknown) => e instanceof InvalidOptionError && e.field === "pythonEngines",
    );
  });
});

describe("queue: what comes back from Redis is untrusted", () => {
  it("a hostile worker's malformed reply becomes a crashed result, never a value", async () => {
    const hostile = await createQueueClient({ redis: redis.url, queue: "hostile", waitMs: 10_000 });
    const reply = (value: unknown) => ({
      v: 1,
      kind: "result",
      worker: "x",
      result: {
        ...{ ok: true, language: "javascript", stdout: "", stderr: "", outputTruncated: false, files: [] },
        ...{ stats: { engine: "quickjs", wallMs: 1, outputBytes: 0 }, value },
      },
    });
    const replies: unknown[] = [
      { v: 1, kind: "result", worker: "x", result: { ok: true, language: "javascript" } },
      reply({ $type: "Function", values: [] }),
      reply(JSON.parse("[".repeat(100) + "]".repeat(100))),
      { ...reply(1), kind: "host", error: { code: "ROOT", message: "forged" } },
      "not an object",
    ];
    let i = 0;
    const fake = new BullWorker("hostile", () => Promise.resolve(replies[i++]), {
      connection: { url: redis.url },
      prefix: "wasmcell",
    });
    try {
      for (const _ of replies) {
        const r = await hostile.run({ language: "javascript", code: "1" });
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.error.kind, "crashed");
        assert.match(!r.ok ? r.error.message : "", /malformed/);
      }
    } finally {
      await fake.close();
      await hostile.close();
    }
  });

  it("a forged message on the replies channel is checked like a stored reply, and garbage is ignored", async () => {
    const forged = await createQueueClient({ redis: redis.url, queue: "forged", waitMs: 10_000 });
    const publisher = new Redis(redis.url);
    try {
      const id = await forged.enqueue({ language: "javascript", code: "1" }); // no worker on this queue
      const pending = forged.result(id);
      let settled = false;
      void pending.finally(() => (settled = true)).catch(() => {});
      const lie = { v: 1, kind: "result", worker: "x", result: { ok: true, language: "javascript" } };
      // Sent until heard (the client's waiter may not be in place yet): garbage first, then the lie.
      for (let i = 0; !settled && i < 500; i++) {
        await publisher.publish("wasmcell:forged:replies", "not json {");
        await publisher.publish("wasmcell:forged:replies", JSON.stringify({ id: `r.${id}`, reply: lie }));
        await new Promise((r) => setTimeout(r, 10));
      }
      const r = await pending;
      assert.equal(!r.ok && r.error.kind, "crashed");
      assert.match(!r.ok ? r.error.message : "", /malformed/);
    } finally {
      publisher.disconnect();
      await forged.close();
    }
  });

  it("a job whose data is not a request is answered with INVALID_OPTION, not run", async () => {
    const { Queue } = await import("bullmq");
    const q = new Queue("wasmcell-runs", { connection: { url: redis.url }, prefix: "wasmcell" });
    try {
      await q.add("run", { v: 1, tenant: "t", request: { language: "javascript", code: 1 } }, { jobId: "r.forged" });
      await assert.rejects(
        client.result("forged"),
        (e: unknown) => e instanceof InvalidOptionError && /job\.request\.code/.test(e.field),
      );
    } finally {
      await q.close();
    }
  });

  it("no worker on a queue: the wait is bounded and says so", async () => {
    const idle = await createQueueClient({ redis: redis.url, queue: "nobody", waitMs: 300 });
    try {
      await assert.rejects(idle.run({ language: "javascript", code: "1" }), QueueWaitError);
    } finally {
      await idle.close();
    }
  });
});
