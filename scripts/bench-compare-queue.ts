// `npm run bench:compare-queue -- REV [ROUNDS]`: the queue's added latency per job, REV against this
// working tree, side by side in one process. One real redis-server on loopback; per side one
// `wasmcell worker` process started from that side's own checkout (its CLI, its worker) and that
// side's own client in this process; direct `sandbox.run` (this tree) as the floor both are measured
// from. Rounds alternate the order of the three, so every side sees the same machine at the same
// moments: on a shared, loaded 2-core machine absolute numbers move by 2× between runs, the ratio
// between rounds a few hundred milliseconds apart does not. Two cases: a tenant without limits, and a
// tenant with a concurrency cap (what the admission's round trip costs).
//
// REV is checked out (detached) into a temporary worktree that borrows this tree's node_modules; it is
// removed at the end. Needs `redis-server` on PATH.
import os from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { checkout } from "./compare-checkout.ts";

interface Clientish {
  run(request: { language: string; code: string }): Promise<{ ok: boolean; value?: unknown }>;
  close(): Promise<void>;
}
interface Side {
  name: string;
  createQueueClient: (options: { redis: string; queue: string; tenant: string }) => Promise<Clientish>;
  startWorker: (
    redis: string,
    args: string[],
    logJobs: boolean,
  ) => Promise<{ child: { kill(s: string): void }; exited: Promise<unknown> }>;
}

const [rev, roundsArg] = process.argv.slice(2);
if (!rev) {
  console.error("usage: npm run bench:compare-queue -- REV [ROUNDS]   (REV: a commit to compare this tree against)");
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 10);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`bench:compare-queue: ROUNDS must be a positive integer, got "${roundsArg}"`);
  process.exit(2);
}
const CALLS = 100; // one-at-a-time runs per side per round
const WORKER_ARGS = ["--js-workers", "2", "--js-max-workers", "2", "--concurrency", "8", "--tenant-cap", "capped=8"];

const { here, commit, base, remove } = checkout(rev, "bench:compare-queue");

async function side(name: string, root: string): Promise<Side> {
  const url = (p: string) => pathToFileURL(join(root, p)).href;
  const queue = (await import(url("src/queue/index.ts"))) as Pick<Side, "createQueueClient">;
  const helper = (await import(url("test/helpers/queue-worker.ts"))) as Pick<Side, "startWorker">;
  return { name, createQueueClient: queue.createQueueClient, startWorker: helper.startWorker };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

const { startRedis } = (await import(pathToFileURL(join(here, "test/helpers/redis.ts")).href)) as {
  startRedis: () => Promise<{ url: string; stop(): Promise<void> }>;
};
const { createSandbox } = (await import(pathToFileURL(join(here, "src/index.ts")).href)) as {
  createSandbox: (o: object) => Promise<Clientish>;
};
const redis = await startRedis();
try {
  const sides = [await side(commit.slice(0, 7), base), await side("this tree", here)];
  console.log(`# wasmcell queue: ${commit.slice(0, 7)} against this tree, ${ROUNDS} alternating rounds\n`);
  console.log(`Node ${process.version}, ${os.cpus().length} cpus, load average ${load()} at the start\n`);
  console.log("| tenant | side | p50 ms | p99 ms | added p50 vs direct | this tree / base (added p50) |");
  console.log("|---|---|---:|---:|---:|---:|");
  const direct = await createSandbox({ javascript: { workers: 2, maxWorkers: 2 } });
  const workers = await Promise.all(
    sides.map((s, i) => s.startWorker(redis.url, [...WORKER_ARGS, "--queue", `compare-${i}`], false)),
  );
  try {
    for (const tenant of ["default", "capped"]) {
      const clients = await Promise.all(
        sides.map((s, i) => s.createQueueClient({ redis: redis.url, queue: `compare-${i}`, tenant })),
      );
      const callers = [direct, ...clients];
      const times: number[][] = callers.map(() => []);
      let n = 0;
      const once = async (c: Clientish) => {
        const k = n++;
        const r = await c.run({ language: "javascript", code: `${k} * 7 + 1` });
        if (!(r.ok && r.value === k * 7 + 1)) throw new Error(`wrong result: ${JSON.stringify(r)}`);
      };
      for (const c of callers) for (let i = 0; i < 50; i++) await once(c); // warm
      for (let round = 0; round < ROUNDS; round++) {
        const order = [0, 1, 2].map((i) => (i + round) % 3); // each caller goes first, second and third in turn
        for (const c of order)
          for (let i = 0; i < CALLS; i++) {
            const t = performance.now();
            await once(callers[c]!);
            times[c]!.push(performance.now() - t);
          }
      }
      await Promise.all(clients.map((c) => c.close()));
      const sorted = times.map((t) => t.sort((a, b) => a - b));
      const p50 = sorted.map((t) => quantile(t, 0.5));
      const added = p50.map((p) => p - p50[0]!);
      ["direct sandbox.run", ...sides.map((s) => s.name)].forEach((name, c) => {
        const ratio = c === 2 ? (added[2]! / added[1]!).toFixed(2) : "";
        const plus = c === 0 ? "—" : `+${added[c]!.toFixed(2)} ms`;
        console.log(
          `| ${tenant} | ${name} | ${p50[c]!.toFixed(2)} | ${quantile(sorted[c]!, 0.99).toFixed(2)} | ${plus} | ${ratio} |`,
        );
      });
    }
    console.log(`\nload average ${load()} at the end`);
  } finally {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    await direct.close();
  }
} finally {
  await redis.stop();
  remove();
}
