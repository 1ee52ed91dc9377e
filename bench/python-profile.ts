// Where a stateless Pyodide `print(1)` spends its time, end to end: the host writes a run frame to an
// UNSEALED sidecar (no bubblewrap, seccomp or permission model — for the profile only) and times the
// result and reset frames; the sidecar's own reset time comes in the reset frame. With `--cpu-prof`
// the sidecar runs under V8's sampling profiler and writes a .cpuprofile to the given directory.
//
//   node bench/python-profile.ts [n] [--cpu-prof DIR] [--memory]
//
// Not a test and not part of `npm run bench`: a tool for docs/benchmarks.md.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { sidecarFiles } from "../src/engines/pyodide/launch.ts";
import { PyodideEngine } from "../src/engines/pyodide/index.ts";
import { resolveOptions } from "../src/options/index.ts";

const args = process.argv.slice(2);
const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 300);
const profDir = args.includes("--cpu-prof") ? args[args.indexOf("--cpu-prof") + 1] : undefined;
const extraFlags = (process.env.SIDECAR_FLAGS ?? "").split(" ").filter(Boolean);

const options = resolveOptions({ python: { pool: 1 } });
const engine = new PyodideEngine(options);
const start = await engine.sidecarOptions(false);
const files = sidecarFiles();
const snap = start.snapshot;
const data = snap && ("data" in snap.source ? snap.source.data : readFileSync(snap.source.path));
const child = spawn(
  process.execPath,
  [
    "--no-warnings",
    "--disallow-code-generation-from-strings",
    "--expose-gc",
    ...extraFlags,
    ...(profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=100"] : []),
    files.sidecar,
    files.pyodideDir,
    files.harness,
    files.zoneinfo ?? "",
    ...(start.library ? [start.library] : []),
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const next = async () => JSON.parse(String((await lines.next()).value)) as Record<string, unknown>;
const t0 = performance.now();
child.stdin.write(
  JSON.stringify({ t: "init", mode: "serve", snapshotBytes: data?.length ?? 0, stateful: false }) + "\n",
);
if (data) child.stdin.write(data);
const ready = await next();
console.log(`ready in ${(performance.now() - t0).toFixed(0)} ms`, JSON.stringify(ready));
const limits = {
  timeoutMs: 30_000,
  memoryMb: 256,
  maxOutputBytes: 1 << 20,
  maxResultBytes: 1 << 20,
  maxFiles: 64,
  maxFileBytes: 10 << 20,
};
const toResult: number[] = [];
const toReset: number[] = [];
const resetInside: number[] = [];
const code = process.env.PROFILE_CODE ?? "print(1)";
for (let id = 1; id <= n; id++) {
  const t = performance.now();
  child.stdin.write(JSON.stringify({ t: "run", id, code, files: {}, limits, truncationMarker: "…" }) + "\n");
  for (;;) {
    const m = await next();
    if (m.t === "result") toResult.push(performance.now() - t);
    if (m.t === "reset") {
      toReset.push(performance.now() - t);
      resetInside.push(Number(m.ms));
      if (typeof m.retire === "string") throw new Error(m.retire);
      break;
    }
  }
}
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * xs.length)]!.toFixed(2);
console.log(`n=${n} code=${JSON.stringify(code)}`);
console.log(`host → result frame    p50 ${p(toResult, 0.5)} ms  p90 ${p(toResult, 0.9)}`);
console.log(`host → reset frame     p50 ${p(toReset, 0.5)} ms  p90 ${p(toReset, 0.9)}`);
console.log(`reset inside sidecar   p50 ${p(resetInside, 0.5)} ms  p90 ${p(resetInside, 0.9)}`);
await new Promise((r) => setTimeout(r, Number(process.env.PROFILE_IDLE_MS ?? 0)));
if (process.env.PROFILE_USR2) {
  child.kill("SIGUSR2");
  await new Promise((r) => setTimeout(r, 300));
}
if (process.env.PROFILE_SMAPS) {
  const regions = readFileSync(`/proc/${child.pid}/smaps`, "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
  const big = regions
    .map((r) => ({
      head: r.split("\n")[0]!,
      rss: Number(/\nRss:\s+(\d+)/.exec(r)?.[1] ?? 0),
      size: Number(/\nSize:\s+(\d+)/.exec(r)?.[1] ?? 0),
    }))
    .sort((a, b) => b.rss - a.rss)
    .slice(0, 25);
  for (const b of big)
    console.log(
      `${(b.rss / 1024).toFixed(1).padStart(7)} MB rss of ${(b.size / 1024).toFixed(0).padStart(8)} MB  ${b.head}`,
    );
}
const smaps = readFileSync(`/proc/${child.pid}/smaps_rollup`, "utf8");
console.log(
  smaps
    .split("\n")
    .filter((l) => /^(Rss|Pss|Anonymous|Private_Dirty|Shared_Clean|Private_Clean)/.test(l))
    .join("\n"),
);
child.stdin.end();
await new Promise((r) => child.once("exit", r));
