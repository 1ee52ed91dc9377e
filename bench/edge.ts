// Benchmark of the JavaScript engine where a container cannot go: `1 + 1` through the built edge
// package (dist/edge.js, bundled by esbuild with each runtime's export conditions, as a user's wrangler
// or page build would) in workerd (Cloudflare's runtime, through miniflare, no nodejs_compat) and in
// headless Chromium, next to Node running the same built files, in one process, interleaved rounds so
// machine noise hits every row alike.
//
// Everything is timed in batches of N runs, never one run: workerd's Date.now/performance.now stand
// still while a request computes (they advance only on I/O), so the host times a request that makes N
// runs and subtracts an empty request's time; Chromium coarsens performance.now (100 µs on a page that
// is not cross-origin isolated), so the page times a batch of N runs. Node is timed the same way so the
// rows compare. p50/p99 are of the batches' per-run means. A runtime that is missing is a row saying
// so, not a failure.
//
//   node bench/edge.ts            prints the markdown report
//
// Not a test: numbers depend on the machine and its load. Nothing here asserts a timing.

import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureBuilt } from "../test/edge/build.ts";
import { bundle, QUICKJS_WASM } from "../test/edge/bundle.ts";
import { chromiumMissing, openPage } from "../test/edge/chromium.ts";
import { summarise } from "./javascript.ts";

const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 10);
const BATCHES = Number(process.env.BENCH_EDGE_BATCHES ?? 5);
const N = Number(process.env.BENCH_EDGE_BATCH ?? 100);
const CODE = "1 + 1";

const root = fileURLToPath(new URL("..", import.meta.url));

interface Subject {
  runtime: string;
  build: string;
  /** How a batch was timed (said after the runs: workerd's includes the request overhead measured). */
  timedBy(): string;
  /** Milliseconds that `n` back-to-back runs took, as this runtime lets them be timed. */
  batch(n: number): Promise<number>;
  close(): Promise<void>;
}

type Opened = Subject | { runtime: string; missing: string };

interface SandboxLike {
  run(r: { language: "javascript"; code: string }): Promise<{ ok: boolean; value?: unknown }>;
  close(): Promise<void>;
}

async function nodeSubject(entry: "edge" | "index"): Promise<Subject> {
  const mod = (await import(pathToFileURL(`${root}dist/${entry}.js`).href)) as {
    createSandbox(): Promise<SandboxLike>;
  };
  const sandbox = await mod.createSandbox();
  return {
    runtime: `Node ${process.version}`,
    build:
      entry === "edge"
        ? "dist/edge.js (the edge build: in-process, as on the edge)"
        : "dist/index.js (the Node build: a worker thread per run slot, the default)",
    timedBy: () => "performance.now around the batch",
    async batch(n) {
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const r = await sandbox.run({ language: "javascript", code: CODE });
        if (!r.ok) throw new Error(`benchmark run failed: ${JSON.stringify(r)}`);
      }
      return performance.now() - start;
    },
    close: () => sandbox.close(),
  };
}

async function workerdSubject(): Promise<Subject> {
  const { Miniflare } = await import("miniflare");
  const code = await bundle("bench/edge/worker.js", ["workerd", "worker", "browser"], "esm", "dist");
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: "worker.js", contents: code },
      { type: "CompiledWasm", path: "quickjs.wasm", contents: QUICKJS_WASM },
    ],
    compatibilityDate: "2025-09-01",
  });
  try {
    await mf.ready;
    const request = async (n: number): Promise<number> => {
      const start = performance.now();
      const res = await mf.dispatchFetch(`http://bench/?n=${n}&code=${encodeURIComponent(CODE)}`);
      const body = await res.text();
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`workerd bench request failed (${res.status}): ${body}`);
      return ms;
    };
    // The request's own cost (host → workerd → host), measured between batches and subtracted.
    const empty: number[] = [];
    return {
      runtime: "workerd (miniflare)",
      build: "dist/edge.js bundled with workerd,worker,browser; quickjs.wasm as a CompiledWasm module",
      timedBy: () =>
        `the host around one request making the batch, minus an empty request's p50 (${summarise(empty, 1).p50.toFixed(2)} ms)`,
      async batch(n) {
        empty.push(await request(0));
        const ms = await request(n);
        return Math.max(0, ms - summarise(empty, 1).p50);
      },
      close: () => mf.dispose(),
    };
  } catch (error) {
    await mf.dispose();
    throw error;
  }
}

async function chromiumSubject(): Promise<Subject> {
  const html = `<!doctype html><meta charset="utf-8"><script type="module" src="./page.js"></script>`;
  const opened = await openPage({
    "/": ["text/html", html],
    "/page.js": ["text/javascript", await bundle("bench/edge/page.js", ["browser"], "esm", "dist")],
    "/quickjs.wasm": ["application/wasm", QUICKJS_WASM],
  });
  try {
    await opened.page.waitForFunction("globalThis.benchReady === true", null, { timeout: 60_000 });
    const version = opened.page.context().browser()?.version() ?? "?";
    return {
      runtime: `Chromium ${version} (headless)`,
      build: "dist/edge.js bundled with browser; quickjs.wasm compiled by the page (compileStreaming)",
      timedBy: () => "performance.now in the page around the batch (coarsened to 100 µs: batches only)",
      // The callback runs in the page (the project's types carry no DOM library).
      batch: (n) => opened.page.evaluate<number>(`globalThis.benchBatch(${n}, ${JSON.stringify(CODE)})`),
      close: () => opened.close(),
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

async function open(runtime: string, start: () => Promise<Subject>, missing?: string): Promise<Opened> {
  if (missing) return { runtime, missing };
  try {
    return await start();
  } catch (error) {
    return { runtime, missing: (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "" };
  }
}

export async function bench(): Promise<string> {
  ensureBuilt();
  const opened: Opened[] = [
    await open("Node (edge build)", () => nodeSubject("edge")),
    await open("Node (Node build)", () => nodeSubject("index")),
    await open("workerd (miniflare)", workerdSubject),
    await open("Chromium (headless)", chromiumSubject, chromiumMissing()),
  ];
  const subjects = opened.filter((s): s is Subject => "batch" in s);
  const perRun = new Map<Subject, number[]>(subjects.map((s) => [s, []]));
  const total = new Map<Subject, number>(subjects.map((s) => [s, 0]));
  try {
    for (const s of subjects) for (let i = 0; i < 3; i++) await s.batch(N); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of subjects) {
        for (let b = 0; b < BATCHES; b++) {
          const ms = await s.batch(N);
          perRun.get(s)!.push(ms / N);
          total.set(s, total.get(s)! + ms);
        }
      }
    }
  } finally {
    for (const s of subjects) await s.close();
  }

  const rows = opened.map((s) => {
    if (!("batch" in s)) return `| ${s.runtime} | — | not run: ${s.missing} | — | — | — |`;
    const stats = summarise(perRun.get(s)!, total.get(s)! / N);
    return `| ${s.runtime} | ${s.build} | ${s.timedBy()} | ${stats.p50.toFixed(3)} | ${stats.p99.toFixed(3)} | ${Math.round(stats.perSecond).toLocaleString("en-US")} |`;
  });
  return [
    "## JavaScript at the edge: `1 + 1` in workerd and Chromium, next to Node",
    "",
    `\`sandbox.run({ language: "javascript", code: "${CODE}" })\` through the built package (\`npm run build\`), ` +
      `${ROUNDS} interleaved rounds × ${BATCHES} batches × ${N} back-to-back runs per row. Each batch is timed ` +
      "as a whole (workerd's clock only moves on I/O; Chromium's is coarsened); p50/p99 are of the batches' " +
      "per-run means, runs/s is all runs over all batch time.",
    "",
    "| runtime | build | timed by | p50 ms/run | p99 ms/run | runs/s |",
    "|---|---|---|---:|---:|---:|",
    ...rows,
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await bench());
}
