// The queue (wasmcell/queue) on this machine: a real redis-server on loopback, 1, 2 and 3
// `wasmcell worker` processes, next to direct `sandbox.run` in the same process and run. Two numbers
// per setup: latency with one job in flight at a time (p50/p99 of client.run; its p50 less the direct
// p50 is what the queue adds per job), and throughput with a batch of JOBS enqueued at once and
// awaited (jobs/s, from the first enqueue to the last result). All workers share this machine's cores
// with the client and Redis, so more workers measure scheduling on these cores, not more machines.
// `WASMCELL_BENCH_JOBS` overrides the batch size (default 2,000).
import os from "node:os";
import { createSandbox } from "../src/index.ts";
import { createQueueClient } from "../src/queue/index.ts";
import { startWorker, type WorkerProcess } from "../test/helpers/queue-worker.ts";
import { startRedis } from "../test/helpers/redis.ts";
import { measure, type Row } from "./measure.ts";

const JOBS = Number(process.env.WASMCELL_BENCH_JOBS ?? 2_000);
const SEQUENTIAL = 300;
const code = (n: number) => `${n} * 7 + 1`;
const WORKER_ARGS = ["--js-workers", "2", "--js-max-workers", "2", "--concurrency", "8"];

export async function bench(): Promise<string> {
  const redis = await startRedis();
  const rows: Array<Row & { setup: string; jobsPerSec: number }> = [];
  try {
    {
      const sandbox = await createSandbox({ javascript: { workers: 2, maxWorkers: 2 } });
      let i = 0;
      const row = await measure("direct", SEQUENTIAL, () => sandbox.run({ language: "javascript", code: code(i++) }));
      const t = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < JOBS) await sandbox.run({ language: "javascript", code: code(next++) });
        }),
      );
      rows.push({
        ...row,
        setup: "direct sandbox.run (16 in flight for the batch)",
        jobsPerSec: JOBS / ((performance.now() - t) / 1000),
      });
      await sandbox.close();
    }
    for (const n of [1, 2, 3]) {
      const queue = `bench-${n}`;
      const workers: WorkerProcess[] = [];
      for (let w = 0; w < n; w++) workers.push(await startWorker(redis.url, [...WORKER_ARGS, "--queue", queue], false));
      const client = await createQueueClient({ redis: redis.url, queue, waitMs: 300_000 });
      try {
        let i = 0;
        const row = await measure(`${n} workers`, SEQUENTIAL, () =>
          client.run({ language: "javascript", code: code(i++) }),
        );
        const t = performance.now();
        const ids = await Promise.all(
          Array.from({ length: JOBS }, (_, k) => client.enqueue({ language: "javascript", code: code(k) })),
        );
        const results = await Promise.all(ids.map((id) => client.result(id)));
        const secs = (performance.now() - t) / 1000;
        const wrong = results.filter((r, k) => !(r.ok && r.value === k * 7 + 1)).length;
        if (wrong > 0) throw new Error(`${wrong} wrong results through the queue`);
        rows.push({ ...row, setup: `queue, ${n} worker${n > 1 ? "s" : ""}`, jobsPerSec: JOBS / secs });
      } finally {
        await client.close();
        for (const w of workers) w.child.kill("SIGTERM");
        await Promise.all(workers.map((w) => w.exited));
      }
    }
  } finally {
    await redis.stop();
  }
  const direct = rows[0]!;
  const lines = [
    `## Queue scale-out (\`npm run bench scale\`)`,
    ``,
    `${os.cpus().length} cores shared by Redis, the client and the workers; ${JOBS} jobs per batch (\`${code(0)}\`-style), ${SEQUENTIAL} one-at-a-time runs for latency.`,
    ``,
    `| setup | jobs/s (batch) | p50 ms (one in flight) | p99 ms | added p50 vs direct |`,
    `|---|---:|---:|---:|---:|`,
    ...rows.map(
      (r) =>
        `| ${r.setup} | ${r.jobsPerSec.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r === direct ? "—" : `+${(r.p50 - direct.p50).toFixed(2)} ms`} |`,
    ),
  ];
  return lines.join("\n");
}
