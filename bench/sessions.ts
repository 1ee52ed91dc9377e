// `npm run bench sessions`: JavaScript sessions (sessions-javascript.ts), then Python sessions as data, side by side in one run — opening a fresh sidecar
// (what a session cost before), opening a session (the checkpoint a pool sidecar already holds), fork,
// resume after an eviction, a snapshot's size after importing json/re/datetime, and the RSS of the
// whole process tree with many evicted sessions on a pool of 2. Ratios within one run are the point.
import { createEngine, type PyodideEngine } from "../src/engines/pyodide/index.ts";
import type { SidecarState } from "../src/engines/pyodide/state-backend.ts";
import type { DataSession } from "../src/engines/sessions/data-session.ts";

type PyodideSession = DataSession<SidecarState>;
import { resolveOptions, resolveRequest, type ResolvedOptions } from "../src/options/index.ts";
import type { RunResult } from "../src/core/types.ts";
import { treeRssBytes } from "./python.ts";
import { bench as javascriptSessions } from "./sessions-javascript.ts";

const RUNS = Number(process.env.BENCH_SESSION_RUNS ?? 30);
const MANY = Number(process.env.BENCH_SESSIONS ?? 200);

function pct(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);

function ok(r: RunResult): unknown {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
}

async function timed(n: number, once: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await once();
    out.push(performance.now() - t);
  }
  return out;
}

export async function bench(): Promise<string> {
  // JavaScript first: it needs no `wasmcell setup`, and its rows sit next to Python's in one run.
  const js = await javascriptSessions();
  return [js, await pythonSessions()].join("\n\n");
}

async function pythonSessions(): Promise<string> {
  const options: ResolvedOptions = resolveOptions({ python: { pool: 2 }, sessions: { idleMs: false } });
  const engine = (await createEngine(options)) as PyodideEngine;
  const req = (code: string) => resolveRequest({ language: "python", code }, options);
  const rows: string[] = [];
  const row = (what: string, s: number[]) =>
    rows.push(`| ${what} | ${s.length} | ${f(pct(s, 50))} | ${f(pct(s, 99))} |`);
  try {
    // A fresh sidecar: what every session cost before (a dedicated process).
    const fresh = await timed(Math.min(RUNS, 5), async () => {
      const s = await engine.startSidecar(false);
      s.kill();
      await s.jail.exited;
    });
    row("start a fresh sidecar (the old cost of a session)", fresh);
    row(
      "open a session + its first run (`x = 1`)",
      await timed(RUNS, async () => {
        const s = await engine.openSession();
        ok(await s.run(req("x = 1")));
        await s.close();
      }),
    );
    const base = await engine.openSession();
    ok(await base.run(req("import json, re, datetime\nx = {'k': list(range(100))}\nopen('/tmp/f', 'w').write('x')")));
    const snapshot = await base.snapshot();
    const snapshotMs = await timed(RUNS, () => base.snapshot());
    row("snapshot() of a session that imported json/re/datetime", snapshotMs);
    row(
      "fork() + close, back to back (each fork waits for the last one's sidecar reset)",
      await timed(RUNS, async () => {
        const child = await base.fork();
        await child.close();
      }),
    );
    const forkMs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // The closed fork's sidecar back in the pool first: what is timed is the fork alone.
      while (engine.pool.stats.idle === 0) await new Promise((r) => setTimeout(r, 2));
      const t = performance.now();
      const child = await base.fork();
      forkMs.push(performance.now() - t);
      await child.close();
    }
    row("fork() into an idle pool sidecar", forkMs);
    const evicted: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await base.evict();
      const t = performance.now();
      ok(await base.run(req("x['k'][3]")));
      evicted.push(performance.now() - t);
    }
    row("resume after eviction (the next run, `x['k'][3]`)", evicted);
    const resident = await timed(RUNS, async () => ok(await base.run(req("x['k'][3]"))));
    row("a run in a resident session (for comparison)", resident);
    await base.close();

    // Density: many sessions, each `x = i` plus an import, every one evicted at least once.
    const t0 = performance.now();
    const sessions: PyodideSession[] = [];
    for (let i = 0; i < MANY; i++) {
      const s = await engine.openSession();
      ok(await s.run(req(`import json\nx = ${i}`)));
      await s.evict();
      sessions.push(s);
    }
    const openAll = performance.now() - t0;
    const rss = treeRssBytes(process.pid);
    let wrong = 0;
    const t1 = performance.now();
    for (let i = 0; i < MANY; i++) {
      if (ok(await sessions[i]!.run(req("json.dumps(x)"))) !== String(i)) wrong++;
      await sessions[i]!.evict();
    }
    const answerAll = performance.now() - t1;
    const rssAfter = treeRssBytes(process.pid);
    const stored = (engine.sessions.store as unknown as { bytes?: number }).bytes ?? 0;
    await Promise.all(sessions.map((s) => s.close()));
    return [
      "## Python sessions (Pyodide, pool 2)",
      "",
      "| what | runs | p50 ms | p99 ms |",
      "|---|---|---|---|",
      ...rows,
      "",
      `- snapshot after importing json/re/datetime: **${(snapshot.length / 1024).toFixed(1)} KiB**`,
      `- ${MANY} sessions opened, each run and evicted: ${f(openAll)} ms (${f(openAll / MANY)} ms each); ` +
        `all answered their own \`x\` after a resume: ${MANY - wrong}/${MANY}, ${f(answerAll / MANY)} ms each`,
      `- RSS of the whole process tree with ${MANY} evicted sessions: ${mb(rss)} MiB (after a second round: ${mb(rssAfter)} MiB); ` +
        `the store holds ${mb(stored)} MiB (${(stored / MANY / 1024).toFixed(1)} KiB a session)`,
    ].join("\n");
  } finally {
    await engine.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await bench());
