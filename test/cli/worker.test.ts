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
