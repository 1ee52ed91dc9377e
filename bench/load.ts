// `npm run bench load`: the seed benchmark's table, reproduced. 10,000 stateless requests, half
// JavaScript and half Python (interleaved), at 100 and at 1,000 in flight, through wasmcell and
// through the seed's per-call recipes (a bare quickjs-emscripten runtime + context per JavaScript call,
// an unsealed Pyodide worker_thread running `pyodide.runPython` for Python) and a bare `python3 -c`
// spawn per request, all in one run. Columns: start latency (request → result) p50/p99, executions/s
// and per core, memory per worker (peak RSS of the process tree during the phase ÷ workers), and the
// escape risk as the layers between guest code and the host.
//
//   node bench/load.ts          prints the markdown (BENCH_LOAD_N=10000, BENCH_LOAD_SPAWN_N=1000)
//
// The spawn subject runs fewer requests and at most SPAWN_IN_FLIGHT processes at once: a shared
// 2-core machine cannot hold 1,000 python3 processes, and its rate does not depend on the count.
// Not a test: ratios within one run on one machine, nothing asserted.
import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { sidecarFiles } from "../src/engines/pyodide/launch.ts";
import { createSandbox } from "../src/index.ts";
import { CODE as JS_CODE, seedRecipeOn } from "./javascript.ts";
import { ownRssBytes, SEED_WORKER, treeRssBytes } from "./python.ts";

const N = Number(process.env.BENCH_LOAD_N ?? 10_000);
const SPAWN_N = Number(process.env.BENCH_LOAD_SPAWN_N ?? 1000);
const SPAWN_IN_FLIGHT = 32;
const PY_CODE = "x = sum(range(100))\nprint(x)";
const CORES = os.availableParallelism();

type Language = "javascript" | "python";
interface Subject {
  name: string;
  risk: string;
  /** How many workers (threads, processes) serve requests: memory is divided by this. */
  workers: () => number;
  run: (language: Language) => Promise<void>;
  /** At most this many requests in flight, whatever the phase asks (undefined: as asked). */
  cap?: number;
  n?: number;
  close: () => Promise<void>;
}
interface Row {
  subject: string;
  inFlight: number;
  n: number;
  p50: number;
  p99: number;
  perSecond: number;
  memoryPerWorker: number;
  risk: string;
}

/** `hostBase`: this process's RSS before the subject was made (its in-process workers are the growth). */
async function phase(subject: Subject, inFlight: number, hostBase: number): Promise<Row> {
  const n = subject.n ?? N;
  const width = Math.min(inFlight, subject.cap ?? inFlight);
  const latencies: number[] = [];
  let next = 0;
  let peakRss = 0;
  // Child processes (sidecars, python3) plus what in-process workers (threads, the seed's recipes)
  // grew this process by since before the subject was made.
  const sampler = setInterval(() => {
    const own = ownRssBytes();
    peakRss = Math.max(peakRss, treeRssBytes(process.pid) - own + Math.max(0, own - hostBase));
  }, 50);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        await subject.run(i % 2 === 0 ? "javascript" : "python");
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    subject: subject.name,
    inFlight: width,
    n,
    p50: at(0.5),
    p99: at(0.99),
    perSecond: n / seconds,
    memoryPerWorker: peakRss / subject.workers(),
    risk: subject.risk,
  };
}

async function wasmcell(): Promise<Subject> {
  const sandbox = await createSandbox({ python: { pool: 2, maxQueue: 2000 }, javascript: { maxQueue: 2000 } });
  // Warm both engines (and their pools) before timing.
  for (let i = 0; i < 20; i++) {
    await sandbox.run({ language: "javascript", code: JS_CODE });
    await sandbox.run({ language: "python", code: PY_CODE });
  }
  return {
    name: "wasmcell `sandbox.run` (JS thread pool + 2 sealed Pyodide sidecars)",
    risk: "JS: QuickJS in WASM, in a worker thread · Python: Pyodide in WASM + bubblewrap + seccomp + Node permission model + uid drop",
    workers: () => CORES + 2,
    run: async (language) => {
      const r = await sandbox.run({ language, code: language === "javascript" ? JS_CODE : PY_CODE });
      if (!r.ok) throw new Error(`wasmcell ${language} run failed: ${r.error.message}`);
    },
    close: () => sandbox.close(),
  };
}

async function seedRecipes(): Promise<Subject> {
  const quickjs = await newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant);
  const js = seedRecipeOn(quickjs);
  const files = sidecarFiles();
  const worker = new Worker(SEED_WORKER, {
    eval: true,
    workerData: { pyodide: `${files.pyodideDir}/pyodide.mjs`, indexURL: `${files.pyodideDir}/` },
  });
  await new Promise((resolve) => worker.once("message", resolve));
  // One worker, one request at a time (as the seed's recipe is written): the rest queue here.
  let chain: Promise<unknown> = Promise.resolve();
  const python = () => {
    const turn = chain.then(
      () =>
        new Promise((resolve) => {
          worker.once("message", resolve);
          worker.postMessage(PY_CODE);
        }),
    );
    chain = turn;
    return turn;
  };
  return {
    name: "the seed's per-call recipes (quickjs-emscripten newContext per call; one unsealed Pyodide worker, `runPython`)",
    risk: "JS: QuickJS in WASM, in the host's thread · Python: none (a shared interpreter in the host process; the guest reaches the host realm)",
    workers: () => 2,
    run: async (language) => {
      if (language === "javascript") {
        // The recipe is synchronous: yield so other requests in flight get their turn, as they would.
        await Promise.resolve();
        js();
      } else await python();
    },
    close: () => worker.terminate().then(() => undefined),
  };
}

function python3Spawn(): Subject {
  let live = 0;
  let peak = 0;
  return {
    name: `a bare \`python3 -c\` spawn per request (JS requests too: \`python3 -c\` of the same work)`,
    risk: "none: native code with the host user's rights",
    workers: () => Math.max(1, peak),
    cap: SPAWN_IN_FLIGHT,
    n: SPAWN_N,
    run: (language) =>
      new Promise<void>((resolve, reject) => {
        const code =
          language === "python" ? PY_CODE : "print({'sum': sum(x * 2 for x in [1, 2, 3, 4, 5]), 's': 'ab' * 3})";
        live++;
        peak = Math.max(peak, live);
        const child = spawn("python3", ["-c", code], { stdio: ["ignore", "ignore", "ignore"] });
        child.once("error", reject);
        child.once("close", (status) => {
          live--;
          if (status === 0) resolve();
          else reject(new Error(`python3 exited ${String(status)}`));
        });
      }),
    close: async () => {},
  };
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

export async function bench(): Promise<string> {
  const rows: Row[] = [];
  // The seed's recipes first: their workers live in this process, and memory it already grew (and
  // kept) for another subject would hide theirs.
  for (const make of [seedRecipes, wasmcell, () => Promise.resolve(python3Spawn())]) {
    const hostBase = ownRssBytes();
    const subject = await make();
    try {
      for (const inFlight of [100, 1000]) rows.push(await phase(subject, inFlight, hostBase));
    } finally {
      await subject.close();
    }
  }
  const base = rows[0]; // the seed's recipes at 100 in flight
  return [
    "## Load: mixed stateless JavaScript and Python requests",
    "",
    `${N.toLocaleString("en")} requests (half JavaScript \`${JS_CODE}\`, half Python \`${PY_CODE.replace("\n", "; ")}\`), ${CORES} cores. Latency is request → result, queueing included. Per core: executions/s ÷ ${CORES}. Memory per worker: peak RSS during the phase of the child processes plus the host's growth since the subject was made, ÷ workers. The spawn subject: ${SPAWN_N.toLocaleString("en")} requests, at most ${SPAWN_IN_FLIGHT} processes at once.`,
    "",
    "| subject | in flight | latency p50 ms | p99 ms | executions/s | per core | × seed | memory per worker | escape risk (layers) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ...rows.map(
      (r) =>
        `| ${r.subject} | ${r.inFlight} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / CORES).toFixed(0)} | ${base ? (r.perSecond / base.perSecond).toFixed(2) : ""} | ${(r.memoryPerWorker / 2 ** 20).toFixed(0)} MB | ${r.risk} |`,
    ),
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await bench());
}
