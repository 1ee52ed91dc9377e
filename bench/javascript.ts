// Benchmark of the JavaScript engine: latency and throughput of a small expression through
// sandbox.run, next to the seed's naive per-call QuickJS recipe and node:vm with a new context, all
// measured the same way in one process (interleaved rounds, so machine noise hits all three alike);
// memory per concurrent run (open sessions); RSS over 100,000 runs; the cost of large results (plain
// JSON-shaped data takes the fast path, data that needs tags the walker).
//
//   node bench/javascript.ts            prints the markdown report
//   import { bench } from "./javascript.ts"   returns it (npm run bench)
//
// Not a test: numbers depend on the machine and its load. Nothing here asserts a timing.

import v8 from "node:v8";
import vm from "node:vm";
import { fileURLToPath } from "node:url";
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { createSandbox } from "../src/index.ts";

/** The research's comparison snippet: a little array work and an object result. */
export const CODE = `({sum: [1, 2, 3, 4, 5].map(x => x * 2).reduce((a, b) => a + b), s: "ab".repeat(3)})`;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 1000);
const RSS_RUNS = Number(process.env.BENCH_RSS_RUNS ?? 100_000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const RESULT_RUNS = Number(process.env.BENCH_RESULT_RUNS ?? 20);

/** Guest code returning about `bytes` of JSON: rows of a small record, plain or with a tagged field. */
function resultCode(bytes: number, tagged: boolean): string {
  const rows = Math.max(1, Math.round(bytes / 64));
  const extra = tagged ? ", d: undefined" : "";
  return `Array.from({ length: ${rows} }, (_, i) => ({ id: i, name: "row" + i, score: i / 7, ok: i % 2 === 0${extra} }))`;
}

/** p50 wall time of sandbox.run for results of 1 KB, 100 KB and 1 MB, plain and tagged. */
export async function resultSizes(
  run: (code: string) => Promise<{ ok: boolean }>,
): Promise<{ label: string; build: number; plain: number; tagged: number }[]> {
  const out = [];
  for (const [label, bytes] of [
    ["1 KB", 1024],
    ["100 KB", 100 * 1024],
    ["1 MB", 1024 * 1024],
  ] as const) {
    const p50 = async (code: string) => {
      const samples: number[] = [];
      for (let i = 0; i < RESULT_RUNS; i++) {
        const t = performance.now();
        const r = await run(code);
        samples.push(performance.now() - t);
        if (!r.ok) throw new Error(`benchmark run failed for a ${label} result`);
      }
      return summarise(samples, 1).p50;
    };
    out.push({
      label,
      build: await p50(`(${resultCode(bytes, false)}).length`),
      plain: await p50(resultCode(bytes, false)),
      tagged: await p50(resultCode(bytes, true)),
    });
  }
  return out;
}

export interface Stats {
  p50: number;
  p99: number;
  perSecond: number;
}

export function summarise(samples: number[], totalMs: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), perSecond: (samples.length / totalMs) * 1000 };
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

/** A full GC before each memory reading, also when node runs without --expose-gc (npm run bench). */
v8.setFlagsFromString("--expose-gc");
const forceGc = vm.runInNewContext("gc") as () => void;
function gc(): void {
  forceGc();
}

/** The seed's runJs, reduced to its per-call work. */
export function seedRecipeOn(quickjs: QuickJSWASMModule): () => unknown {
  return (): unknown => {
    const runtime = quickjs.newRuntime();
    runtime.setMemoryLimit(128 * 1024 * 1024);
    runtime.setMaxStackSize(1024 * 1024);
    const deadline = Date.now() + 5000;
    runtime.setInterruptHandler(() => Date.now() > deadline);
    const context = runtime.newContext();
    const result = context.evalCode(CODE);
    let value: unknown;
    if (result.error) {
      result.error.dispose();
    } else {
      value = context.dump(result.value);
      result.value.dispose();
    }
    context.dispose();
    runtime.dispose();
    return value;
  };
}

export async function bench(): Promise<string> {
  // The engine itself, on this thread (bench/javascript-pool.ts measures the worker-thread pool).
  const sandbox = await createSandbox({ javascript: { isolation: "in-process" } });
  const quickjs = await newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant);

  const seedRecipe = seedRecipeOn(quickjs);
  const nodeVm = (): unknown => vm.runInNewContext(CODE);
  const wasmcell = async (): Promise<unknown> => {
    const r = await sandbox.run({ language: "javascript", code: CODE });
    if (!r.ok) throw new Error(`benchmark run failed: ${r.error.message}`);
    return r.value;
  };

  const subjects: [string, () => unknown][] = [
    ["wasmcell `sandbox.run` (in-process)", wasmcell],
    ["seed recipe (newRuntime + limits + newContext + evalCode + dump + dispose)", seedRecipe],
    ["node:vm `runInNewContext` (not a security boundary)", nodeVm],
  ];
  const samples = new Map<string, number[]>(subjects.map(([name]) => [name, []]));
  const totals = new Map<string, number>(subjects.map(([name]) => [name, 0]));
  for (const [, fn] of subjects) for (let i = 0; i < 300; i++) await fn(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of subjects) {
      const list = samples.get(name) ?? [];
      const start = performance.now();
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await fn();
        list.push(performance.now() - t);
      }
      totals.set(name, (totals.get(name) ?? 0) + performance.now() - start);
    }
  }

  // Latency when the caller is not back to back (an agent between tool calls): the engine builds the
  // next context in idle time, so a run's latency no longer includes JS_NewContext.
  const idleSamples: number[] = [];
  for (let i = 0; i < PER_ROUND; i++) {
    await new Promise((r) => setTimeout(r, 1));
    const t = performance.now();
    await wasmcell();
    idleSamples.push(performance.now() - t);
  }
  const idle = summarise(idleSamples, 1);

  // Memory per concurrent run: sessions hold a runtime + context each, like a run in flight. (In a
  // helper, so no binding of this function keeps a closed session — and its module — reachable.)
  const openSessions = async (): Promise<{ before: number; during: number }> => {
    gc();
    const before = process.memoryUsage().rss;
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) {
      const s = await sandbox.session({ language: "javascript" });
      await s.run({ code: "globalThis.n = 1" });
      sessions.push(s);
    }
    gc();
    const during = process.memoryUsage().rss;
    await Promise.all(sessions.map((s) => s.close()));
    return { before, during };
  };
  const { before, during } = await openSessions();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const closed = process.memoryUsage().rss;

  // Large results.
  const sizes = await resultSizes((code) =>
    sandbox.run({ language: "javascript", code, limits: { maxResultBytes: 8 << 20, timeoutMs: 30_000 } }),
  );

  // RSS across many runs.
  gc();
  const rssStart = process.memoryUsage().rss;
  for (let i = 0; i < RSS_RUNS; i++) await wasmcell();
  gc();
  const rssEnd = process.memoryUsage().rss;
  await sandbox.close();

  const rows = subjects.map(([name]) => {
    const s = summarise(samples.get(name) ?? [], totals.get(name) ?? 1);
    return `| ${name} | ${s.p50.toFixed(3)} | ${s.p99.toFixed(3)} | ${Math.round(s.perSecond).toLocaleString("en-US")} |`;
  });
  const load = (await import("node:os")).loadavg()[0]?.toFixed(2) ?? "?";
  return [
    "### JavaScript engine (QuickJS) — measured",
    "",
    `Snippet: \`${CODE}\`. ${ROUNDS} interleaved rounds × ${PER_ROUND} sequential runs each, one core (one async loop), Node ${process.version}, load average ${load} at the end.`,
    "",
    "| subject | p50 ms | p99 ms | runs/s (one core) |",
    "|---|---|---|---|",
    ...rows,
    "",
    `With 1 ms of idle time between calls (the next context is prepared in idle time): wasmcell \`sandbox.run\` p50 ${idle.p50.toFixed(3)} ms, p99 ${idle.p99.toFixed(3)} ms.`,
    "",
    `Memory per concurrent run: ${SESSIONS.toLocaleString("en-US")} open sessions (a runtime + context each) grew RSS by ${mb(during - before)} MB → ${((during - before) / SESSIONS / 1024).toFixed(0)} KB per run (RSS ${mb(before)} MB before, ${mb(during)} MB with them open, ${mb(closed)} MB after closing them).`,
    "",
    `Results of growing size (rows of \`{ id, name, score, ok }\`, p50 of ${RESULT_RUNS} runs, ms; "tagged" adds an \`undefined\` field, which plain JSON cannot say, so the tagging walker runs):`,
    "",
    "| result | building it only (returns its length) | plain JSON (fast path) | tagged (walker) |",
    "|---|---|---|---|",
    ...sizes.map((r) => `| ${r.label} | ${r.build.toFixed(1)} | ${r.plain.toFixed(1)} | ${r.tagged.toFixed(1)} |`),
    "",
    `RSS across ${RSS_RUNS.toLocaleString("en-US")} runs: ${mb(rssStart)} MB before, ${mb(rssEnd)} MB after (${rssEnd >= rssStart ? "+" : ""}${mb(rssEnd - rssStart)} MB).`,
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await bench());
}
