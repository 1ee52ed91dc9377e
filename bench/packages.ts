// Benchmark of the package library and the first run after `wasmcell setup` (issue: batteries,
// pinned). Needs the library installed (`wasmcell setup`); numbers are for comparison within one run.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine as createNative, type NativeEngine } from "../src/engines/native/index.ts";
import { createEngine, type PyodideEngine } from "../src/engines/pyodide/index.ts";
import { cacheDir } from "../src/engines/pyodide/boot-image.ts";
import { resolveOptions, resolveRequest, type ResolvedOptions } from "../src/options/index.ts";
import { createSandbox } from "../src/index.ts";
import { setup } from "../src/setup/index.ts";
import { installedLibrary } from "../src/library/library.ts";
import { seedRecipe, timeoutKillToFull } from "./python.ts";

const N = Number(process.env.BENCH_N ?? 200);
const INDEX = fileURLToPath(new URL("../src/index.ts", import.meta.url));
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (v: number) => v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);

async function latency(engine: { run: PyodideEngine["run"] }, options: ResolvedOptions, code: string, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n + 10; i++) {
    const t = performance.now();
    const r = await engine.run(resolveRequest({ language: "python", code }, options));
    if (!r.ok) throw new Error(`${code}: ${JSON.stringify(r.error)}`);
    if (i >= 10) out.push(performance.now() - t);
  }
  return out;
}

async function throughput(
  engine: PyodideEngine | NativeEngine,
  options: ResolvedOptions,
  callers: number,
  seconds: number,
) {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const r = await engine.run(
          resolveRequest({ language: "python", code: "import json\njson.dumps({'a': [1, 2]})" }, options),
        );
        if (!r.ok) throw new Error(JSON.stringify(r.error));
        done++;
      }
    }),
  );
  return done / seconds;
}

/** RSS of a process and its descendants (the jail's tree), from /proc. */
function treeRss(pid: number): number {
  let kb = 0;
  const walk = (p: number) => {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
      for (const c of readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
        walk(Number(c));
    } catch {
      // gone
    }
  };
  walk(pid);
  return kb * 1024;
}

function freshProcessFirstResult(): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), "wasmcell-bench-home-"));
  const program = `import { createSandbox } from ${JSON.stringify(INDEX)};
const t0 = performance.now();
const s = await createSandbox({ python: { pool: 1 } });
const r = await s.run({ language: "python", code: "print(1)" });
const first = performance.now() - t0;
await s.close();
if (!r.ok) throw new Error(JSON.stringify(r.error));
console.log(first);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", program], {
      env: { PATH: process.env.PATH, HOME: home, WASMCELL_CACHE_DIR: cacheDir() },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.on("close", () => {
      rmSync(home, { recursive: true, force: true });
      const v = Number(out.trim().split("\n").pop());
      if (Number.isFinite(v)) resolve(v);
      else reject(new Error(`fresh process printed ${out}`));
    });
  });
}

export async function bench(): Promise<string> {
  const library = installedLibrary();
  if (!library) return "## Packages\n\nThe package library is not installed: run `wasmcell setup` first.\n";
  const rows: string[] = [];
  const row = (what: string, value: string, target = "") => rows.push(`| ${what} | ${value} | ${target} |`);

  const again = await setup();
  row(
    "`wasmcell setup` when up to date (the `setup()` call)",
    `${ms(again.ms)} ms (${again.status})`,
    "well under 1 s",
  );

  // The default pool (2 sidecars): the first starts alone, the second once it is ready.
  const t0 = performance.now();
  const sandbox = await createSandbox({ python: {} });
  const r = await sandbox.run({ language: "python", code: "print(1)" });
  const first = performance.now() - t0;
  await sandbox.close();
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  row(
    "createSandbox → first `print(1)` result, after setup (this process, default pool of 2)",
    `${ms(first)} ms`,
    "≤ 1 000 ms",
  );
  row(
    "fresh process, empty HOME, set-up cache → first result",
    `${ms(await freshProcessFirstResult())} ms`,
    "≤ 3 000 ms",
  );

  const options = resolveOptions({ python: { pool: 2 } });
  const engine = (await createEngine(options)) as PyodideEngine;
  try {
    await engine.pool.whenFull();
    const empty = await latency(engine, options, "pass", N);
    const print1 = await latency(engine, options, "print(1)", N);
    const stdlib = await latency(engine, options, "import json, re, datetime", N);
    const stdlib6 = await latency(engine, options, "import json, re, datetime, collections, math, statistics", N);
    const libs = await latency(engine, options, "import requests, bs4, yaml, jinja2, dateutil, tabulate", N);
    row(`stateless empty run, pool of 2 (n=${N})`, `p50 ${ms(pct(empty, 50))} ms`);
    row("stateless `print(1)`", `p50 ${ms(pct(print1, 50))} ms · p99 ${ms(pct(print1, 99))} ms`, "p50 ≤ 5 ms");
    row(
      "`import json, re, datetime` (in the snapshot)",
      `p50 ${ms(pct(stdlib, 50))} ms (${(pct(stdlib, 50) / pct(empty, 50)).toFixed(2)}× empty)`,
      "≤ 1.5× empty",
    );
    row("`import json, re, datetime, collections, math, statistics`", `p50 ${ms(pct(stdlib6, 50))} ms`);
    row("`import requests, bs4, yaml, jinja2, dateutil, tabulate` (preloaded)", `p50 ${ms(pct(libs, 50))} ms`);
    row("runs/s, pool of 2 busy (4 callers, 5 s)", `${(await throughput(engine, options, 4, 5)).toFixed(1)}`);

    // Where a sidecar's start goes (host: spawn → ready; inside: the sidecar's own phases).
    await engine.pool.whenFull();
    const sidecar = await engine.pool.acquire();
    const t = sidecar.timing;
    engine.pool.release(sidecar, true);
    const phase = (name: string) => ms(t.phases[name] ?? 0);
    row(
      "sidecar start from the snapshot: spawn → ready (jail + Node boot · snapshot read · Pyodide load · setup · checkpoint)",
      `${ms(t.readyMs)} ms (${ms(t.readyMs - t.innerStartMs)} · ${phase("received")} · ${ms(t.loadMs)} · ${phase("setup")} · ${phase("checkpoint")})`,
    );

    const kills = await timeoutKillToFull(engine, options, 3);
    row(
      "timeout kill → pool full again (pool of 2, library mounted), 3 kills",
      `p50 ${ms(pct(kills, 50))} ms · max ${ms(Math.max(...kills))} ms`,
      "≤ 1 000 ms",
    );
  } finally {
    await engine.close();
  }
  // One warm sidecar, measured by itself.
  const one = (await createEngine(resolveOptions({ python: { pool: 1 } }))) as PyodideEngine;
  try {
    await one.pool.whenFull();
    await one.run(resolveRequest({ language: "python", code: "print(1)" }, options));
    const sidecar = await one.pool.acquire();
    row(
      "RSS per warm sidecar (jail process tree, library mounted)",
      `${(treeRss(sidecar.jail.child.pid!) / 2 ** 20).toFixed(0)} MB`,
    );
    one.pool.release(sidecar, true);
  } finally {
    await one.close();
  }

  const nativeOptions = resolveOptions({ python: { engine: "native", pool: 2 } });
  const native = (await createNative(nativeOptions)) as NativeEngine;
  try {
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the spares start
    const lat = await latency(native, nativeOptions, "print(1)", 20);
    row("native `print(1)`, back to back, pre-started jails (n=20)", `p50 ${ms(pct(lat, 50))} ms`);
    row(
      "native runs/s, pool of 2 busy (4 callers, 5 s)",
      `${(await throughput(native, nativeOptions, 4, 5)).toFixed(1)}`,
    );
  } finally {
    await native.close();
  }

  const seed = await seedRecipe(N);
  row("seed recipe (in-process worker, shared interpreter): `print(1)`", `p50 ${ms(pct(seed.lat, 50))} ms`);
  row("seed recipe: sustained runs, 1 worker", `${seed.rps.toFixed(1)} runs/s`);

  return [
    `## Packages and first run (${library.manifest.packages.length} packages, ${library.manifest.preload.length} preloaded imports)`,
    "",
    "| what | measured | target |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}
