// Benchmark of the Pyodide engine, measured in one run next to the seed's in-process recipe (Pyodide
// in a worker_thread, a fresh globals dict per run — which is NOT isolation and NOT a sandbox: it is
// the floor to compare against). `node bench/python.ts` prints the markdown; `npm run bench python`
// runs it with the others. Numbers are for comparison within one run on one (shared) machine.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { createEngine, type PyodideEngine } from "../src/engines/pyodide/index.ts";
import { launchSidecar, sidecarFiles } from "../src/engines/pyodide/launch.ts";
import { SidecarProcess } from "../src/engines/pyodide/sidecar-client.ts";
import { getSnapshot, type Snapshot } from "../src/engines/pyodide/boot-image.ts";
import { resolveOptions, resolveRequest, type ResolvedOptions, type ResolvedSeal } from "../src/options/index.ts";
import { createSandbox } from "../src/index.ts";

const N = Number(process.env.BENCH_N ?? 200);

function pct(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** RSS of a process and all its descendants (the jail chain: bwrap's init + node), from /proc. */
export function treeRssBytes(root: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (rss) total += Number(rss[1]) * 1024;
    } catch {
      // gone
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

async function latency(engine: PyodideEngine, options: ResolvedOptions, code: string, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + 10; i++) {
    const t0 = performance.now();
    const r = await engine.run(resolveRequest({ language: "python", code }, options));
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    if (i >= 10) samples.push(performance.now() - t0);
  }
  return samples;
}

async function throughput(
  engine: PyodideEngine,
  options: ResolvedOptions,
  concurrency: number,
  seconds: number,
  code = "x = sum(range(100))\nprint(x)",
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const r = await engine.run(resolveRequest({ language: "python", code }, options));
        if (!r.ok) throw new Error(JSON.stringify(r.error));
        done++;
      }
    }),
  );
  return done / seconds;
}

const ASYNC_CODE = "import asyncio\nawait asyncio.sleep(0)\n1";

/** The resets the engine counted while `during` ran: their mean cost and how many retired a sidecar. */
async function resetsDuring(
  engine: PyodideEngine,
  during: () => Promise<unknown>,
): Promise<{ meanMs: number; retired: number }> {
  const before = { ...engine.resets };
  await during();
  await engine.pool.whenFull();
  const proven = engine.resets.proven - before.proven;
  return {
    meanMs: (engine.resets.totalMs - before.totalMs) / Math.max(1, proven),
    retired: engine.resets.retired - before.retired,
  };
}

export function ownRssBytes(): number {
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return rss ? Number(rss[1]) * 1024 : 0;
}

/** Spawn → ready of one sidecar, and its tree's RSS once ready. */
async function startOnce(
  seal: ResolvedSeal,
  snapshot: Snapshot | undefined,
): Promise<{ ms: number; inner: number; rss: number }> {
  const s = await SidecarProcess.start({ seal, processMemoryMb: 512, ...(snapshot ? { snapshot } : {}) });
  const rss = treeRssBytes(s.jail.pid);
  s.kill();
  await s.jail.exited;
  return { ms: s.timing.readyMs, inner: s.timing.innerStartMs, rss };
}

/** The seal's own cost: a trivial program started exactly like a sidecar, sealed vs not. */
async function sealCost(
  seal: ResolvedSeal,
  off: ResolvedSeal,
  n: number,
): Promise<{ sealed: number[]; bare: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-bench-"));
  chmodSync(dir, 0o755);
  const program = join(dir, "exit.mjs");
  writeFileSync(program, "process.stdout.write('ok\\n'); process.exit(0);\n");
  chmodSync(program, 0o644);
  const sealed: number[] = [];
  const bare: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      for (const [s, out] of [
        [seal, sealed],
        [off, bare],
      ] as const) {
        const t0 = performance.now();
        const jail = await launchSidecar({ seal: s, processMemoryMb: 512, program });
        jail.child.stdout.resume();
        jail.child.stderr.resume();
        jail.child.stdin.end();
        await jail.exited;
        out.push(performance.now() - t0);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { sealed, bare };
}

/** createSandbox → first result, in a fresh Node process (the disk snapshot cache is warm). */
function firstResultInFreshProcess(): Promise<{ create: number; first: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "--first-result"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.on("close", () => {
      try {
        resolve(JSON.parse(out.trim().split("\n").pop()!) as { create: number; first: number });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

async function firstResult(): Promise<void> {
  const t0 = performance.now();
  const sandbox = await createSandbox({ python: { pool: 1 } });
  const create = performance.now() - t0;
  const r = await sandbox.run({ language: "python", code: "print(1)" });
  const first = performance.now() - t0;
  await sandbox.close();
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  console.log(JSON.stringify({ create, first }));
}

// The seed's recipe: Pyodide loaded once in a worker_thread of the host process, each run with a
// fresh globals dict. Shared interpreter (modules, builtins, files leak between runs) and the guest
// can reach the host realm — here only as the speed floor.
export const SEED_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { loadPyodide } = await import(workerData.pyodide);
  const t0 = performance.now();
  const py = await loadPyodide({ indexURL: workerData.indexURL });
  let out = "";
  py.setStdout({ batched: (s) => (out += s + "\\n") });
  parentPort.postMessage({ ready: performance.now() - t0 });
  parentPort.on("message", async (code) => {
    out = "";
    const globals = py.toPy({});
    let value;
    try { value = String(await py.runPythonAsync(code, { globals })); } catch (e) { value = String(e); }
    globals.destroy();
    parentPort.postMessage({ value, out });
  });
})();
`;

export async function seedRecipe(n: number): Promise<{ spawnToReady: number; lat: number[]; rps: number }> {
  const files = sidecarFiles();
  const t0 = performance.now();
  const worker = new Worker(SEED_WORKER, {
    eval: true,
    workerData: { pyodide: `${files.pyodideDir}/pyodide.mjs`, indexURL: `${files.pyodideDir}/` },
  });
  const next = () => new Promise<{ ready?: number; value?: string }>((resolve) => worker.once("message", resolve));
  await next();
  const spawnToReady = performance.now() - t0;
  const lat: number[] = [];
  for (let i = 0; i < n + 10; i++) {
    const t = performance.now();
    worker.postMessage("print(1)");
    await next();
    if (i >= 10) lat.push(performance.now() - t);
  }
  const until = performance.now() + 3000;
  let done = 0;
  while (performance.now() < until) {
    worker.postMessage("x = sum(range(100))\nprint(x)");
    await next();
    done++;
  }
  await worker.terminate();
  return { spawnToReady, lat, rps: done / 3 };
}

/**
 * A guest that swallows every KeyboardInterrupt, so the jail's deadline kills its sidecar at
 * timeoutMs + 1 s: milliseconds from each timeout result until the pool is full again.
 */
export async function timeoutKillToFull(
  engine: PyodideEngine,
  options: ResolvedOptions,
  n: number,
  ready: () => Promise<void> = () => engine.pool.whenFull(),
): Promise<number[]> {
  const kills: number[] = [];
  for (let i = 0; i < n; i++) {
    await ready();
    const r = await engine.run(
      resolveRequest(
        {
          language: "python",
          code: "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
          limits: { timeoutMs: 200 },
        },
        options,
      ),
    );
    const t = performance.now();
    if (r.ok || r.error.kind !== "timeout") throw new Error(`expected a timeout: ${JSON.stringify(r)}`);
    await engine.pool.whenFull();
    kills.push(performance.now() - t);
  }
  return kills;
}

export async function bench(): Promise<string> {
  const options = resolveOptions({ python: { pool: 2 } });
  const seal = options.seal;
  const processMemoryMb = 512;
  const snapshot = await getSnapshot({ seal, processMemoryMb });
  const rows: string[] = [];
  const row = (what: string, value: string, target = "") => rows.push(`| ${what} | ${value} | ${target} |`);

  const fresh = await firstResultInFreshProcess();
  row(
    "createSandbox → first `print(1)` result, fresh Node process (snapshot cached on disk)",
    `${ms(fresh.first)} ms (createSandbox ${ms(fresh.create)} ms)`,
    "≤ 1 000 ms",
  );

  const engine = (await createEngine(options)) as PyodideEngine;
  try {
    await engine.pool.whenFull();
    const lat = await latency(engine, options, "print(1)", N);
    row(
      `stateless \`print(1)\`, warm pool of 2, sequential (n=${N})`,
      `p50 ${ms(pct(lat, 50))} ms · p99 ${ms(pct(lat, 99))} ms`,
      "p50 ≤ 10 ms",
    );
    // The sidecar's own measure of each reset (rebuild from the checkpoint + the fingerprint proof),
    // off the caller's path: it runs after the result is sent.
    const { proven, retired, totalMs, maxMs } = engine.resets;
    row(
      `reset after each of those runs (rebuild + proof, inside the sidecar, after the result)`,
      `mean ${ms(totalMs / Math.max(1, proven))} ms · max ${ms(maxMs)} ms · ${retired} of ${proven + retired} retired`,
      "off the caller's path",
    );
    const rps = await throughput(engine, options, 4, 5);
    row(
      "sustained stateless runs, pool of 2 busy (4 callers, 5 s), fresh interpreter state every run",
      `${rps.toFixed(1)} runs/s`,
      "≥ 20 runs/s",
    );
    const asyncRps = await throughput(engine, options, 4, 5, ASYNC_CODE);
    row(
      "the same with top-level `await` (a pure-Python event loop: reset in place, no retirement)",
      `${asyncRps.toFixed(1)} runs/s`,
    );
    // The reset's cost where runs dirty more of the memory (imports), and what an async run costs
    // back to back (it used to retire its sidecar: ~1.6 s each).
    const importResets = await resetsDuring(engine, () => latency(engine, options, "import json, re, datetime", N));
    row(
      `reset after each stateless \`import json, re, datetime\` (n=${N}; dirty 64 KiB blocks copied back)`,
      `mean ${ms(importResets.meanMs)} ms · ${importResets.retired} retired`,
      "off the caller's path",
    );
    const started = engine.sidecarsStarted;
    let asyncLat: number[] = [];
    const asyncResets = await resetsDuring(engine, async () => {
      asyncLat = await latency(engine, options, ASYNC_CODE, Math.min(N, 100));
    });
    row(
      `stateless top-level \`await\` run, sequential (n=${Math.min(N, 100)})`,
      `p50 ${ms(pct(asyncLat, 50))} ms · mean ${ms(asyncLat.reduce((a, b) => a + b, 0) / asyncLat.length)} ms · reset mean ${ms(asyncResets.meanMs)} ms · ${engine.sidecarsStarted - started} sidecars started`,
      "no retirement",
    );
    // Both pool members have served hundreds of runs by now: their steady-state RSS.
    await engine.pool.whenFull();
    row(
      "memory per warm sidecar after those runs (RSS of the sidecars' process trees / pool of 2)",
      `${((treeRssBytes(process.pid) - ownRssBytes()) / 2 / 2 ** 20).toFixed(0)} MB`,
    );

    const kills = await timeoutKillToFull(engine, options, 3);
    row(
      "timeout kill → pool full again (sidecar from snapshot), 3 kills",
      `p50 ${ms(pct(kills, 50))} ms · max ${ms(Math.max(...kills))} ms`,
      "≤ 300 ms",
    );
  } finally {
    await engine.close();
  }
  // The same with a standby sidecar (python.standby: 1): the pool is full again when the standby steps
  // in; the second number is until a new standby is up too (the full recovery, off the run path).
  const standbyOptions = resolveOptions({ python: { pool: 2, standby: 1 } });
  const standbyEngine = (await createEngine(standbyOptions)) as PyodideEngine;
  try {
    await standbyEngine.pool.whenFull();
    const standbyUp = async () => {
      while (standbyEngine.pool.standby < 1) await new Promise((r) => setTimeout(r, 5));
    };
    await standbyUp();
    const full: number[] = [];
    const back: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [kill] = await timeoutKillToFull(standbyEngine, standbyOptions, 1, standbyUp);
      const t = performance.now();
      await standbyUp();
      full.push(kill!);
      back.push(kill! + performance.now() - t);
    }
    row(
      "… with `python.standby: 1`: pool full again / its new standby up, 3 kills",
      `p50 ${ms(pct(full, 50))} ms · max ${ms(Math.max(...full))} ms / p50 ${ms(pct(back, 50))} ms`,
      "≤ 300 ms",
    );
  } finally {
    await standbyEngine.close();
  }

  const snap: { ms: number; inner: number; rss: number }[] = [];
  for (let i = 0; i < 3; i++) snap.push(await startOnce(seal, snapshot));
  const cold: { ms: number; inner: number; rss: number }[] = [];
  for (let i = 0; i < 2; i++) cold.push(await startOnce(seal, undefined));
  row(
    "sidecar spawn → ready, from the memory snapshot (sealed)",
    `p50 ${ms(
      pct(
        snap.map((s) => s.ms),
        50,
      ),
    )} ms (inside: ${ms(
      pct(
        snap.map((s) => s.inner),
        50,
      ),
    )} ms)`,
  );
  row(
    "sidecar spawn → ready, cold `loadPyodide()` (sealed)",
    `p50 ${ms(
      pct(
        cold.map((s) => s.ms),
        50,
      ),
    )} ms (inside: ${ms(
      pct(
        cold.map((s) => s.inner),
        50,
      ),
    )} ms)`,
  );
  row(
    "memory per warm sidecar (RSS of the jail's process tree, from snapshot)",
    `${(
      pct(
        snap.map((s) => s.rss),
        50,
      ) /
      2 ** 20
    ).toFixed(0)} MB`,
  );
  row("snapshot size", `${(snapshot.bytes / 2 ** 20).toFixed(1)} MB`);

  const off: ResolvedSeal = { bubblewrap: false, seccomp: false, nodePermissions: false, dropPrivileges: false };
  const cost = await sealCost(seal, off, 8);
  const sealedP50 = pct(cost.sealed, 50);
  const bareP50 = pct(cost.bare, 50);
  row(
    "seal's own cost per sidecar start (node exiting at once: full seal vs none, interleaved n=8)",
    `${ms(sealedP50 - bareP50)} ms (${ms(sealedP50)} vs ${ms(bareP50)} ms)`,
    "≤ 25 ms",
  );

  const seed = await seedRecipe(N);
  row("seed recipe (in-process worker_thread, shared interpreter): spawn → ready", `${ms(seed.spawnToReady)} ms`);
  row(
    "seed recipe: `print(1)`, fresh globals dict (not isolated)",
    `p50 ${ms(pct(seed.lat, 50))} ms · p99 ${ms(pct(seed.lat, 99))} ms`,
  );
  row("seed recipe: sustained runs, 1 worker", `${seed.rps.toFixed(1)} runs/s`);

  return [
    "## Python (Pyodide sidecars)",
    "",
    `Seal: bubblewrap ${seal.bubblewrap ? "on" : "off"}, seccomp ${String(seal.seccomp)}, Node permission model ${seal.nodePermissions ? "on" : "off"}, uid drop ${seal.dropPrivileges ? "on (when root)" : "off"}.`,
    "",
    "| measure | result | target |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}

if (process.argv.includes("--first-result")) {
  await firstResult();
} else if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await bench());
}
