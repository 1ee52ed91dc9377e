// `wasmcell worker` as operators run it: SIGTERM drains (the run in flight finishes, nothing new is
// taken, exit 0), /metrics shows the queue, and a lock shorter than the deadline is refused at start.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createQueueClient, type QueueClient } from "../../src/queue/index.ts";
import { runNode } from "../helpers/process.ts";
import { startWorker } from "../helpers/queue-worker.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let redis: RedisServer;
let client: QueueClient;
before(async () => {
  redis = await startRedis();
  client = await createQueueClient({ redis: redis.url, waitMs: 30_000 });
});
after(async () => {
  await client?.close();
  await redis?.stop();
});

const busy = (ms: number) => `const t = Date.now(); while (Date.now() - t < ${ms}) {} "done"`;

describe("wasmcell worker", () => {
  it("SIGTERM: the run in flight finishes, no new job is taken, exit 0", async () => {
    const worker = await startWorker(redis.url, [
      "--timeout-ms",
      "4000",
      "--lock-ms",
      "10000",
      "--metrics-port",
      "0",
      "--concurrency",
      "1",
    ]);
    const first = await client.enqueue({ language: "javascript", code: busy(1_000) });
    for (let i = 0; worker.events.length === 0 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(worker.events[0]?.type, "start");
    const metrics = await (await fetch(worker.metricsUrl!)).text();
    assert.match(metrics, /wasmcell_queue_active_jobs 1/);
    assert.match(metrics, /wasmcell_queue_depth\{state="active"\} 1/);
    // Waiting behind the first (concurrency 1) when the drain starts: the worker must not take it.
    const waiting = await client.enqueue({ language: "javascript", code: "1" });
    worker.child.kill("SIGTERM");
    const result = await client.result(first);
    assert.equal(result.ok && result.value, "done");
    assert.equal(await worker.exited, 0, worker.stderr());
    assert.deepEqual(
      worker.events.filter((e) => e.id === `r.${waiting}`),
      [],
    );
    assert.match(worker.stderr(), /drained/);
  });

  it("Redis gone: one line says so (no stack traces), it comes back, and SIGTERM still ends the worker", async () => {
    const own = await startRedis();
    const worker = await startWorker(own.url, ["--timeout-ms", "4000", "--lock-ms", "10000"]);
    const gone = own.process.exitCode === null && own.process.kill("SIGKILL");
    assert.ok(gone);
    await own.stop();
    // Long enough for many reconnect attempts by each of the worker's connections.
    await new Promise((r) => setTimeout(r, 4_000));
    const back = await startRedis(own.port);
    let served: Awaited<ReturnType<typeof client.result>> | undefined;
    try {
      const there = await createQueueClient({ redis: back.url, waitMs: 30_000 });
      try {
        served = await there.result(await there.enqueue({ language: "javascript", code: "6 * 7" }));
      } finally {
        await there.close();
      }
      // Gone again, for good this time: the drain must not wait for it.
      back.process.kill("SIGKILL");
      await back.stop();
      await new Promise((r) => setTimeout(r, 2_000));
      worker.child.kill("SIGTERM");
      const code = await Promise.race([
        worker.exited,
        new Promise((r) => setTimeout(() => r("still running"), 30_000)),
      ]);
      assert.equal(code, 0, worker.stderr());
    } finally {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await back.stop();
    }
    assert.equal(served?.ok && served.value, 42);
    const stderr = worker.stderr();
    assert.doesNotMatch(stderr, /Unhandled error event|^\s+at /m);
    assert.equal(stderr.match(/Redis .*unreachable/g)?.length, 2, stderr);
    assert.equal(stderr.match(/Redis .*reachable again/g)?.length, 1, stderr);
    assert.match(stderr, /drained/);
  });

  it("refuses a lock duration the deadline does not fit, naming both", async () => {
    const ran = await runNode(["src/cli/main.ts", "worker", "--redis", redis.url, "--lock-ms", "4000"]);
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(
      ran.stderr,
      /lockDurationMs: 4000 ms does not fit the longest run deadline a job may ask for \(limits.timeoutMs 5000 ms\)/,
    );
  });

  it("needs --redis", async () => {
    const ran = await runNode(["src/cli/main.ts", "worker"], { env: { ...process.env, WASMCELL_REDIS: "" } });
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /needs --redis/);
  });
});
