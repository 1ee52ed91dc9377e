// Benchmark of where JavaScript runs: the worker-thread pool (`javascript.isolation: "thread"`, the
// default) next to the in-process engine, the seed's per-call QuickJS recipe run back to back, and
// node:vm. Sequential latency; 10,000 requests with 100 in flight (throughput, latency, peak RSS); the
// host's event-loop lag while a guest spins or hangs in a C builtin; results of 1 KB / 100 KB / 1 MB.
//
//   node bench/javascript-pool.ts        prints the markdown report
//   npm run bench javascript-pool        the same, from bench/run.ts
//
// Not a test: numbers depend on the machine and its load (printed with them). Nothing here asserts.

import os from "node:os";
import vm from "node:vm";
import { fileURLToPath } from "node:url";
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { createSandbox, type Sandbox } from "../src/index.ts";
import { CODE, seedRecipeOn, summarise, type Stats } from "./javascript.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 1000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 100);

const fmt = (n: number, digits = 3) => n.toFixed(digits);
const perSecond = (n: number) => Math.round(n).toLocaleString("en-US");
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

async function runOrThrow(sandbox: Sandbox, code: string): Promise<unknown> {
  const r = await sandbox.run({ language: "javascript", code });
  if (!r.ok) throw new Error(`benchmark run failed: ${r.error.message}`);
  return r.value;
}

/** `REQUESTS` calls with `IN_FLIGHT` at a time: throughput, per-call latency, peak RSS. */
async function underLoad(call: () => Promise<unknown>): Promise<Stats & { peakRssMb: number }> {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < REQUESTS) {
      next++;
      const t = performance.now();
      await call();
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const total = performance.now() - start;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ...summarise(latencies, total), peakRssMb: peak / 1024 / 1024 };
}

/**
 * The host's event-loop lag while `work` runs: the longest gap between ticks of a 5 ms interval beyond
 * its period, the gap still open when the work ends included (a loop blocked the whole time never
 * ticks), and the p99 of the gaps.
 */
async function lagDuring(work: () => Promise<unknown>): Promise<{ max: number; p99: number }> {
  const PERIOD = 5;
  const gaps: number[] = [];
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    gaps.push(Math.max(0, now - last - PERIOD));
    last = now;
  }, PERIOD);
  await work();
  clearInterval(tick);
  gaps.push(Math.max(0, performance.now() - last - PERIOD));
  return { max: Math.max(...gaps), p99: summarise(gaps, 1).p99 };
}

export async function bench(): Promise<string> {
  const loadBefore = load();
  const pool = await createSandbox({ javascript: { isolation: "thread" } });
  const local = await createSandbox({ javascript: { isolation: "in-process" } });
  const quickjs = await newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant);
  const seedRecipe = seedRecipeOn(quickjs);

  // 1. Sequential, back to back, interleaved rounds so machine noise hits every subject alike.
  const subjects: [string, () => unknown][] = [
    ["wasmcell, thread pool (default)", () => runOrThrow(pool, CODE)],
    ["wasmcell, in-process", () => runOrThrow(local, CODE)],
    ["seed recipe (newRuntime + newContext + evalCode + dump + dispose)", seedRecipe],
    ["node:vm `runInNewContext` (not a security boundary)", (): unknown => vm.runInNewContext(CODE) as unknown],
  ];
  const samples = new Map<string, number[]>(subjects.map(([n]) => [n, []]));
  const totals = new Map<string, number>(subjects.map(([n]) => [n, 0]));
  for (const [, fn] of subjects) for (let i = 0; i < 300; i++) await fn();
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the pool's spare finishes starting
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of subjects) {
      const list = samples.get(name)!;
      const start = performance.now();
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await fn();
        list.push(performance.now() - t);
      }
      totals.set(name, totals.get(name)! + performance.now() - start);
    }
  }
  const sequential = new Map(subjects.map(([n]) => [n, summarise(samples.get(n)!, totals.get(n)!)]));
  const seedRate = sequential.get(subjects[2]![0])!.perSecond;

  // 2. Many requests, many in flight.
  const loaded: [string, Stats & { peakRssMb: number }][] = [];
  for (const [name, sandbox] of [
    ["thread pool", pool],
    ["in-process", local],
  ] as const) {
    loaded.push([name, await underLoad(() => runOrThrow(sandbox, CODE))]);
  }

  // 3. Result sizes: the value crosses the thread once, by structured clone.
  const sizeRows: string[] = [];
  for (const [label, n] of [
    ["1 KB", 1024],
    ["100 KB", 100 * 1024],
    ["1 MB", 1000 * 1024],
  ] as const) {
    const code = `Array.from({ length: ${n / 64} }, (_, i) => ({ i, s: "x".repeat(40) }))`;
    const cells: string[] = [];
    for (const sandbox of [pool, local]) {
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t = performance.now();
        const r = await sandbox.run({ language: "javascript", code, limits: { maxResultBytes: 4 << 20 } });
        if (!r.ok) throw new Error(r.error.message);
        times.push(performance.now() - t);
      }
      cells.push(fmt(summarise(times, 1).p50, 2));
    }
    sizeRows.push(`| ${label} | ${cells.join(" | ")} |`);
  }

  // 4. The host's event loop while a guest spins (interruptible) or hangs in a C builtin (not).
  const spin = "while (true) {}";
  const hang = 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")';
  const lagRows: string[] = [];
  for (const [what, sandbox, code] of [
    ["thread pool, `while (true) {}` (1 s deadline)", pool, spin],
    ["thread pool, `indexOf` over a 2^32 array-like (1 s deadline)", pool, hang],
    ["in-process, `while (true) {}` (1 s deadline)", local, spin],
  ] as const) {
    const started = performance.now();
    const lag = await lagDuring(() => sandbox.run({ language: "javascript", code, limits: { timeoutMs: 1000 } }));
    lagRows.push(`| ${what} | ${fmt(lag.max, 1)} | ${fmt(lag.p99, 1)} | ${fmt(performance.now() - started, 0)} |`);
  }

  await pool.close();
  await local.close();
  return [
    "### JavaScript: thread pool and in-process — measured",
    "",
    `Node ${process.version}, ${os.availableParallelism()} cores, default options (${os.availableParallelism()} workers + 1 spare). Load average ${loadBefore} at the start, ${load()} at the end.`,
    "",
    `Sequential, back to back (${ROUNDS} interleaved rounds × ${PER_ROUND}), snippet \`${CODE}\`:`,
    "",
    "| subject | p50 ms | p99 ms | runs/s |",
    "|---|---|---|---|",
    ...subjects.map(([n]) => {
      const s = sequential.get(n)!;
      return `| ${n} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${perSecond(s.perSecond)} |`;
    }),
    "",
    `${REQUESTS.toLocaleString("en-US")} requests, ${IN_FLIGHT} in flight:`,
    "",
    "| subject | runs/s | × seed recipe back to back | p50 ms | p99 ms | peak RSS MB |",
    "|---|---|---|---|---|---|",
    ...loaded.map(
      ([n, s]) =>
        `| ${n} | ${perSecond(s.perSecond)} | ${fmt(s.perSecond / seedRate, 2)} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.peakRssMb, 0)} |`,
    ),
    "",
    "Host event-loop delay while hostile code runs:",
    "",
    "| guest | max ms | p99 ms | run ended after ms |",
    "|---|---|---|---|",
    ...lagRows,
    "",
    "Result size, p50 ms of a run returning an array of small objects:",
    "",
    "| result | thread pool | in-process |",
    "|---|---|---|",
    ...sizeRows,
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await bench());
}
