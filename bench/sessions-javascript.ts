// The JavaScript half of `npm run bench sessions`: QuickJS sessions as data on the thread pool and
// in-process, side by side in one run — opening a session, snapshot (and its size), fork, resume from
// bytes, the next run after an eviction, and a run in a resident session for comparison.
import { createEngine } from "../src/engines/quickjs/index.ts";
import type { DataSession } from "../src/engines/sessions/data-session.ts";
import type { SessionsEngine } from "../src/engines/sessions/with-sessions.ts";
import { openSnapshot } from "../src/engines/sessions/snapshot.ts";
import { resolveOptions, resolveRequest } from "../src/options/index.ts";
import type { RunResult } from "../src/core/types.ts";

const RUNS = Number(process.env.BENCH_SESSION_RUNS ?? 30);
/** Idle time between samples of the "with idle time" rows. */
const PAUSE = 50;

function pct(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

function ok(r: RunResult): unknown {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
}

/** `pauseMs` before each sample: idle time in which the next pristine module instance gets ready. */
async function timed(n: number, once: () => Promise<unknown>, pauseMs = 0): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    const t = performance.now();
    await once();
    out.push(performance.now() - t);
  }
  return out;
}

const STATE =
  "globalThis.x = { k: Array.from({ length: 100 }, (_, i) => i) }; class A {}; globalThis.a = new A(); new URL('https://a.example/').host";

export async function bench(): Promise<string> {
  const out: string[] = ["## JavaScript sessions (QuickJS, a module instance per session)", ""];
  for (const isolation of ["thread", "in-process"] as const) {
    const options = resolveOptions({ javascript: { isolation, workers: 1 }, sessions: { idleMs: false } });
    const engine = (await createEngine(options)) as SessionsEngine;
    const req = (code: string) => resolveRequest({ language: "javascript", code }, options);
    const rows: string[] = [];
    const row = (what: string, s: number[]) =>
      rows.push(`| ${what} | ${s.length} | ${f(pct(s, 50))} | ${f(pct(s, 99))} |`);
    try {
      row(
        "a stateless run `1` (no session, for comparison)",
        await timed(RUNS, async () => ok(await engine.run(req("1")))),
      );
      const openOnce = async () => {
        const s = await engine.openSession();
        ok(await s.run(req("globalThis.x = 1")));
        await s.close();
      };
      row("open a session + its first run (`x = 1`), back to back", await timed(RUNS, openOnce));
      row("open a session + its first run, with idle time between", await timed(RUNS, openOnce, PAUSE));
      const base = await engine.openSession();
      ok(await base.run(req(STATE)));
      const blob = await base.snapshot();
      row("snapshot() (sealed bytes)", await timed(RUNS, () => base.snapshot()));
      const forkOnce = async () => {
        const child = await base.fork();
        await child.close();
      };
      row("fork(), back to back (each waits for an instantiation)", await timed(RUNS, forkOnce));
      row("fork(), with idle time between (a pristine instance is ready)", await timed(RUNS, forkOnce, PAUSE));
      const { state } = openSnapshot(options.sessions.key, blob, options.sessions.maxSnapshotBytes);
      const resumed: DataSession[] = [];
      const resumeOnce = async () => resumed.push(await engine.resumeSession(state, blob.length));
      row("resume from bytes, back to back (the engine's part of sandbox.resume)", await timed(RUNS, resumeOnce));
      row("resume from bytes, with idle time between", await timed(RUNS, resumeOnce, PAUSE));
      await Promise.all(resumed.map((s) => s.close()));
      const evicted: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await base.evict();
        const t = performance.now();
        ok(await base.run(req("x.k[3]")));
        evicted.push(performance.now() - t);
      }
      row("resume after eviction (the next run, `x.k[3]`)", evicted);
      row(
        "a run in a resident session (for comparison)",
        await timed(RUNS, async () => ok(await base.run(req("x.k[3]")))),
      );
      await base.close();
      out.push(
        `### ${isolation}`,
        "",
        "| what | runs | p50 ms | p99 ms |",
        "|---|---|---|---|",
        ...rows,
        "",
        `- snapshot of a session holding a 100-element array, a class instance and the URL family: **${(blob.length / 1024).toFixed(1)} KiB**`,
        "",
      );
    } finally {
      await engine.close();
    }
  }
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await bench());
