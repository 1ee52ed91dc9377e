// What bounds issue 23's targets: the parts of a run that no implementation keeping wasmcell's rules can
// skip, each measured alone, next to the seed's recipes and wasmcell itself, in one run on one machine.
//
// - JavaScript: every stateless run gets a fresh QuickJS context (JS_NewContext, then JS_FreeContext):
//   the seed's per-call recipe is little more than that. Through the thread pool a run also crosses
//   two threads, one wake-up each way (measured here with a bare futex and a bare postMessage
//   ping-pong between two idle threads).
// - Python: a stateless run starts from a proven checkpoint: every block of the interpreter's linear
//   memory compared, every entry of its function table read by identity. Both are measured here on a
//   bare Pyodide in a plain Node process (no seal), whose RSS is also the floor of a sidecar's.
//
//   node bench/floors.ts        prints the markdown report
//   npm run bench floors        the same, from bench/run.ts
//
// Not a test: nothing here asserts. Ratios within one run are what the numbers are for.

import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { createSandbox } from "../src/index.ts";
import { sidecarFiles } from "../src/engines/pyodide/launch.ts";
import { CODE, seedRecipeOn } from "./javascript.ts";

const N = Number(process.env.BENCH_N ?? 5000);
const ROUNDS = 5;

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const us = (ms: number): string => (ms * 1000).toFixed(0);
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

function timeSync(n: number, f: () => unknown): number[] {
  for (let i = 0; i < Math.min(200, n); i++) f();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    out.push(performance.now() - t);
  }
  return out;
}

async function timeAsync(n: number, f: () => Promise<unknown>, between?: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(200, n); i++) {
    await f();
    await between?.();
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    out.push(performance.now() - t);
    await between?.();
  }
  return out;
}

// Two idle threads passing a counter: by futex (both sides block in Atomics.wait) and by postMessage
// (both sides asleep in their event loops). Half a round trip is one wake-up and hand-over.
const PING = `
const { parentPort, workerData } = require("node:worker_threads");
const a = new Int32Array(workerData);
parentPort.on("message", (m) => {
  if (m !== "futex") return parentPort.postMessage(m);
  for (let seen = 0; ; ) {
    Atomics.wait(a, 0, seen);
    seen = Atomics.load(a, 0);
    if (seen < 0) return;
    Atomics.store(a, 1, seen);
    Atomics.notify(a, 1);
  }
});`;

async function wakeUps(n: number): Promise<{ futex: number; message: number }> {
  const sab = new SharedArrayBuffer(8);
  const a = new Int32Array(sab);
  const w = new Worker(PING, { eval: true, workerData: sab });
  const message: number[] = [];
  await new Promise<void>((done) => {
    let i = 0;
    let t = performance.now();
    w.on("message", () => {
      if (i++ > 200) message.push(performance.now() - t);
      if (i >= n + 200) return done();
      t = performance.now();
      w.postMessage(i);
    });
    w.postMessage(0);
  });
  w.postMessage("futex");
  await new Promise((r) => setTimeout(r, 20));
  const futex: number[] = [];
  for (let i = 1; i <= n + 200; i++) {
    const t = performance.now();
    Atomics.store(a, 0, i);
    Atomics.notify(a, 0);
    while (Atomics.load(a, 1) !== i) Atomics.wait(a, 1, Atomics.load(a, 1), 50);
    if (i > 200) futex.push(performance.now() - t);
  }
  Atomics.store(a, 0, -1);
  Atomics.notify(a, 0);
  await w.terminate();
  return { futex: p50(futex) / 2, message: p50(message) / 2 };
}

// The seed's recipe in a worker thread, for as long as the host says: how much a second core adds to it.
const RECIPE_THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { newQuickJSWASMModuleFromVariant } = await import(workerData.core);
  const variant = (await import(workerData.variant)).default;
  const q = await newQuickJSWASMModuleFromVariant(variant);
  const once = () => {
    const rt = q.newRuntime();
    rt.setMemoryLimit(128 * 1024 * 1024);
    rt.setMaxStackSize(1024 * 1024);
    const c = rt.newContext();
    const r = c.evalCode(workerData.code);
    if (r.error) r.error.dispose();
    else { c.dump(r.value); r.value.dispose(); }
    c.dispose();
    rt.dispose();
  };
  for (let i = 0; i < 500; i++) once();
  parentPort.postMessage("ready");
  parentPort.once("message", (ms) => {
    const t = performance.now();
    let n = 0;
    while (performance.now() - t < ms) { once(); n++; }
    parentPort.postMessage(n / ms * 1000);
  });
})();`;

/** The recipe's runs/s summed over `threads` threads running at once for `ms`. */
async function recipeOnThreads(threads: number, ms: number): Promise<number> {
  const workerData = {
    core: import.meta.resolve("quickjs-emscripten-core"),
    variant: import.meta.resolve("@jitl/quickjs-wasmfile-release-sync"),
    code: CODE,
  };
  const ws = Array.from({ length: threads }, () => new Worker(RECIPE_THREAD, { eval: true, workerData }));
  try {
    await Promise.all(ws.map((w) => new Promise((r) => w.once("message", r))));
    const rates = ws.map((w) => new Promise<number>((r) => w.once("message", r)));
    for (const w of ws) w.postMessage(ms);
    return (await Promise.all(rates)).reduce((a, b) => a + b, 0);
  } finally {
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

/** `n` calls with `width` in flight: runs/s, and CPU per run of the whole process (host and worker threads). */
async function inFlight(
  n: number,
  width: number,
  call: () => Promise<unknown>,
): Promise<{ rate: number; cpu: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const lane = async () => {
    while (next++ < n) await call();
  };
  await Promise.all(Array.from({ length: width }, lane));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { rate: (n / ms) * 1000, cpu: (cpu.user + cpu.system) / 1000 / n };
}

/** A bare Pyodide in a plain Node child (no seal, no checkpoint): its RSS and the proof's two reads. */
const BARE_PYODIDE = `
const { loadPyodide } = await import(process.argv[1] + "/pyodide.mjs");
const py = await loadPyodide({ indexURL: process.argv[1] + "/" });
py.runPython("print(1)");
// Its memory as it stands, before the copy below (30 MB of this process's own) is made.
const status = (await import("node:fs")).readFileSync("/proc/self/status", "utf8");
const heap = py._module.HEAPU8;
const copy = new Uint8Array(heap);
const table = py._module.wasmTable;
const ref = Array.from({ length: table.length }, (_, i) => table.get(i));
const cmp = [], tab = [];
for (let r = 0; r < 30; r++) {
  let t = performance.now();
  if (Buffer.compare(heap, copy) !== 0) throw new Error("memory moved");
  cmp.push(performance.now() - t);
  t = performance.now();
  for (let i = 0; i < table.length; i++) if (table.get(i) !== ref[i]) throw new Error("table moved");
  tab.push(performance.now() - t);
}
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const kb = (k) => Number(new RegExp(k + ":\\\\s+(\\\\d+) kB").exec(status)?.[1] ?? NaN) / 1024;
console.log(JSON.stringify({ memoryMb: heap.length / 2 ** 20, compareMs: med(cmp), entries: table.length,
  tableMs: med(tab), rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") }));
`;

interface Bare {
  memoryMb: number;
  compareMs: number;
  entries: number;
  tableMs: number;
  rss: number;
  anon: number;
  file: number;
}

function barePyodide(): Promise<Bare> {
  const dir = sidecarFiles().pyodideDir;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", BARE_PYODIDE, dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) return reject(new Error(`bare Pyodide failed (exit ${code}): ${out}`));
      resolve(JSON.parse(line) as Bare);
    });
  });
}

export async function bench(): Promise<string> {
  const startLoad = load();
  const quickjs = await newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant);
  const rt = quickjs.newRuntime();
  const run = (s: { run: (r: { language: "javascript"; code: string }) => Promise<unknown> }) => () =>
    s.run({ language: "javascript", code: CODE });
  const idle = () => new Promise((r) => setImmediate(() => setImmediate(r)));
  const inProcess = await createSandbox({ javascript: { isolation: "in-process" } });
  const threads = await createSandbox({});
  // Interleaved rounds: this machine's speed moves by a third from one minute to the next, and the
  // rows are only worth reading against each other.
  const recipe: number[] = [];
  const context: number[] = [];
  const ready: number[] = [];
  const backToBack: number[] = [];
  const pool: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const n = Math.ceil(N / ROUNDS);
    recipe.push(...timeSync(n, seedRecipeOn(quickjs)));
    context.push(...timeSync(n, () => rt.newContext().dispose()));
    ready.push(...(await timeAsync(n, run(inProcess), idle)));
    backToBack.push(...(await timeAsync(n, run(inProcess))));
    pool.push(...(await timeAsync(n, run(threads))));
  }
  rt.dispose();
  await inProcess.close();
  const flight = await inFlight(N, 100, run(threads));
  await threads.close();
  const wake = await wakeUps(N);
  // One thread before and after the two, so a machine that got faster or slower meanwhile shows less.
  const oneBefore = await recipeOnThreads(1, 2000);
  const twoThreads = await recipeOnThreads(2, 2000);
  const oneThread = (oneBefore + (await recipeOnThreads(1, 2000))) / 2;
  const bare = await barePyodide();

  const r = p50(recipe);
  const c = p50(context);
  const ready50 = p50(ready);
  // The worker can sleep on a futex; the host's thread only ever wakes through its event loop.
  const hop = wake.futex + wake.message;
  const poolFloor = ready50 + hop;
  const perCore = c + ready50;
  return [
    "### What bounds issue 23's targets — measured",
    "",
    `Node ${process.version}, ${os.cpus().length} cores, ${N} runs per row in ${ROUNDS} interleaved rounds, load average ${startLoad} at the start, ${load()} at the end.`,
    "",
    "| JavaScript | p50 µs |",
    "|---|---:|",
    `| the seed's recipe, back to back (newRuntime + newContext + evalCode + dump + dispose) | ${us(r)} |`,
    `| a fresh context alone in a warm runtime (JS_NewContext + JS_FreeContext): every stateless run needs one | ${us(c)} |`,
    `| one wake-up of an idle thread: futex (half a ping-pong) | ${us(wake.futex)} |`,
    `| one wake-up of an idle thread: postMessage (half a ping-pong) | ${us(wake.message)} |`,
    `| wasmcell in-process, its next context built in idle time | ${us(ready50)} |`,
    `| wasmcell in-process, back to back (the context built on the run's path) | ${us(p50(backToBack))} |`,
    `| wasmcell thread pool, back to back | ${us(p50(pool))} |`,
    `| wasmcell thread pool, 100 in flight: CPU per run, every thread of the process | ${us(flight.cpu)} |`,
    "",
    `The seed's recipe itself on ${os.cpus().length} cores: ${Math.round(oneThread).toLocaleString("en-US")} runs/s on one ` +
      `thread, ${Math.round(twoThreads).toLocaleString("en-US")} on two at once (${(twoThreads / oneThread).toFixed(2)}×): ` +
      `the most a second core adds to a run that does nothing but the recipe.`,
    "",
    `- Back to back through the pool, no run can be faster than a run with its context ready plus the hop (a futex ` +
      `wake of the worker, a message wake of the host): ` +
      `${us(poolFloor)} µs = ${(poolFloor / r).toFixed(2)}× the recipe (target ≤ 1.3×), and that only if building the ` +
      `next context (${us(c)} µs) overlapped the next run somewhere; on one worker it does not, so the floor there ` +
      `is the in-process back-to-back run plus the hop: ${us(p50(backToBack) + hop)} µs = ` +
      `${((p50(backToBack) + hop) / r).toFixed(2)}×.`,
    `- Throughput: each run costs at least a context and the run itself on some core (${us(perCore)} µs), so two ` +
      `cores serve at most ${Math.round(2000 / perCore).toLocaleString("en-US")} runs/s before any host work = ` +
      `${((2 / perCore) * r).toFixed(2)}× the recipe's back-to-back rate (target ≥ 1.6×). The pool at 100 in flight: ` +
      `${Math.round(flight.rate).toLocaleString("en-US")} runs/s = ${((flight.rate / 1000) * r).toFixed(2)}×, ` +
      `${us(flight.cpu)} µs of CPU per run, ${us(flight.cpu - perCore)} µs of it beyond the context and the run.`,
    "",
    "| Python (a bare Pyodide in a plain Node process: no seal, no checkpoint) | |",
    "|---|---:|",
    `| RSS after \`print(1)\` | ${bare.rss.toFixed(0)} MB (${bare.anon.toFixed(0)} MB anonymous, ${bare.file.toFixed(0)} MB file-backed) |`,
    `| its linear memory | ${bare.memoryMb.toFixed(1)} MB |`,
    `| comparing that memory against a copy (\`Buffer.compare\`, the proof's memory read) | ${bare.compareMs.toFixed(2)} ms |`,
    `| reading its function table by identity (${bare.entries.toLocaleString("en-US")} entries) | ${bare.tableMs.toFixed(2)} ms |`,
    "",
    `- A sidecar holds at least a bare Pyodide: ${bare.anon.toFixed(0)} MB anonymous (target ≤ 120 MB RSS per sidecar, ` +
      `before the checkpoint's own copy of the memory).`,
    `- A stateless run starts after those two reads at the least (${(bare.compareMs + bare.tableMs).toFixed(1)} ms; ` +
      `the file system, the realm and the run itself come on top): two sidecars serve at most ` +
      `${Math.round(2000 / (bare.compareMs + bare.tableMs))} runs/s (target ≥ 600).`,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await bench());
