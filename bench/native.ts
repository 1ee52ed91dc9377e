// Benchmark of the native tier: what the jail costs over a bare python3 spawn, layer by layer, and
// start-to-result through the engine. `node bench/native.ts` prints the markdown table; `npm run
// bench native` runs it with the others. Interleaved runs, p50/p90 — the machine is shared, so
// compare within one run, never across runs.
import { spawn } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { pythonJailSpec, pythonLayout } from "../src/engines/native/binds.ts";
import { cgroupSupport } from "../src/jail/index.ts";
import { spawnJailed, type JailSpec } from "../src/jail/index.ts";
import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal } from "../src/options/index.ts";
import { createSandbox } from "../src/index.ts";

const PYTHON = "/usr/bin/python3";
const N = Number(process.env.BENCH_N ?? 20);

function pct(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function bare(code: string): Promise<number> {
  const t0 = performance.now();
  const child = spawn(PYTHON, ["-I", "-c", code], { stdio: ["ignore", "pipe", "pipe"], env: {} });
  child.stdout.resume();
  child.stderr.resume();
  await new Promise((resolve) => child.once("close", resolve));
  return performance.now() - t0;
}

const layout = pythonLayout(PYTHON);
function jailSpec(code: string, seal: ResolvedSeal, memory: boolean): JailSpec {
  return {
    ...pythonJailSpec(layout, ["-I", "-c", code], seal),
    ...(memory ? { memoryBytes: 256 << 20 } : {}),
    wallClockMs: 30_000,
  };
}

async function jailed(code: string, seal: ResolvedSeal, memory: boolean): Promise<number> {
  const t0 = performance.now();
  const jail = await spawnJailed(jailSpec(code, seal, memory));
  jail.child.stdout.resume();
  jail.child.stderr.resume();
  jail.child.stdin.end();
  await Promise.all([jail.exited, new Promise((r) => jail.child.once("close", r))]);
  return performance.now() - t0;
}

export async function bench(): Promise<string> {
  const root = process.getuid?.() === 0;
  const variants: [string, (code: string) => Promise<number>][] = [
    ["bare `python3 -I -c`", (c) => bare(c)],
    [
      "launcher + prlimit, no namespaces",
      (c) => jailed(c, { ...RESOLVED_DEFAULT_SEAL, bubblewrap: false, seccomp: false, dropPrivileges: false }, false),
    ],
    [
      "+ bwrap (namespaces, binds, tmpfs)",
      (c) => jailed(c, { ...RESOLVED_DEFAULT_SEAL, seccomp: false, dropPrivileges: false }, false),
    ],
    ["+ seccomp", (c) => jailed(c, { ...RESOLVED_DEFAULT_SEAL, dropPrivileges: false }, false)],
    ...(root
      ? [
          ["+ uid drop (setpriv)", (c: string) => jailed(c, RESOLVED_DEFAULT_SEAL, false)] as [
            string,
            (code: string) => Promise<number>,
          ],
        ]
      : []),
    ...(cgroupSupport().memoryParent
      ? [
          ["+ memory/pids cgroup = full jail", (c: string) => jailed(c, RESOLVED_DEFAULT_SEAL, true)] as [
            string,
            (code: string) => Promise<number>,
          ],
        ]
      : []),
  ];
  const sandbox = await createSandbox({ python: { engine: "native" } });
  const engine = async (code: string, cold = false) => {
    const t0 = performance.now();
    // Limits other than the sandbox's defaults do not match the pre-started jail: a cold spawn.
    const r = await sandbox.run({
      language: "python",
      engine: "native",
      code,
      ...(cold ? { limits: { memoryMb: 129 } } : {}),
    });
    if (!r.ok) throw new Error(`bench run failed: ${r.error.message}`);
    return performance.now() - t0;
  };
  const workloads = [
    ["print(1)", "print(1)"],
    ["import numpy", "import numpy"],
  ] as const;
  const lines = [
    "## Native tier (jailed /usr/bin/python3)",
    "",
    `${N} interleaved runs each; wall time from spawn to exit (engine: from \`run()\` to the result). ms, p50 / p90 (min).`,
    "",
    `| variant | ${workloads.map(([name]) => `\`${name}\``).join(" | ")} |`,
    `| --- | ${workloads.map(() => "---").join(" | ")} |`,
  ];
  const rows: [string, (code: string) => Promise<number>][] = [
    ...variants,
    ["engine `sandbox.run()`, cold jail per run (full jail + driver + harness)", (c) => engine(c, true)],
    ["engine `sandbox.run()`, pre-started jail (the default)", (c) => engine(c)],
  ];
  const table = new Map<string, string[]>();
  const p50 = new Map<string, number[]>();
  const mins = new Map<string, number[]>();
  for (const [, code] of workloads) {
    const samples = rows.map(() => [] as number[]);
    for (const [, fn] of rows) await fn(code); // warm the page cache and the checkSeal probe
    for (let i = 0; i < N; i++) {
      for (const [j, [, fn]] of rows.entries()) samples[j]!.push(await fn(code));
      // The engine refills its pre-started jail in the background after a run; let that finish so
      // it does not load the next round's samples.
      await sleep(300);
    }
    rows.forEach(([name], j) => {
      const s = samples[j]!;
      table.set(name, [
        ...(table.get(name) ?? []),
        `${pct(s, 50).toFixed(1)} / ${pct(s, 90).toFixed(1)} (${pct(s, 0).toFixed(1)})`,
      ]);
      p50.set(name, [...(p50.get(name) ?? []), pct(s, 50)]);
      mins.set(name, [...(mins.get(name) ?? []), pct(s, 0)]);
    });
  }
  for (const [name] of rows) lines.push(`| ${name} | ${table.get(name)!.join(" | ")} |`);
  await sandbox.close();
  const fullName = rows[rows.length - 3]![0];
  const overhead = (stat: Map<string, number[]>) =>
    workloads
      .map(([name], i) => `\`${name}\` +${(stat.get(fullName)![i]! - stat.get(rows[0]![0])![i]!).toFixed(1)} ms`)
      .join(", ");
  lines.push(
    "",
    `Jail overhead over a bare spawn (\`${fullName}\`): p50 ${overhead(p50)}; min ${overhead(mins)} (target ≤ 30 ms at p50).`,
    `Load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")} on ${cpus().length} cores.`,
  );
  return lines.join("\n");
}

if (import.meta.main) console.log(await bench());
