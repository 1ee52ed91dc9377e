// `npm run bench:compare -- REV [ROUNDS]`: the same calls through two checkouts of wasmcell, REV and
// this working tree, loaded side by side into one process and timed in alternating rounds, so both
// see the same machine at the same moments. It is how a refactor shows it kept the benchmarks within
// noise "in one run": a shared, noisy 2-core machine moves absolute numbers by 2× between two runs,
// but not between two rounds a few hundred milliseconds apart.
//
// REV is checked out (detached) into a temporary worktree that borrows this tree's node_modules; it is
// removed at the end. Pyodide runs with `python.snapshot: false` on both sides: the engine snapshot's
// key covers the sidecar's files, so a REV whose sidecar differs would otherwise build (and cache) a
// snapshot of its own mid-measurement. What is timed is the run, not the sidecar's start.
//
// `--sessions`: Python session cases instead (snapshot, fork, resume, a stored call's run + snapshot).
// Those need the engine snapshot (a cold sidecar's session is never snapshotted), so each side runs
// with `python.snapshot: true` and its own snapshot, built into the cache first if it is not there.
import os from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { checkout } from "./compare-checkout.ts";

interface Sessionish {
  run(request: { code: string }): Promise<{ ok: boolean }>;
  snapshot(): Promise<Uint8Array>;
  fork(): Promise<Sessionish>;
  close(): Promise<void>;
}
interface Sandboxish {
  run(request: { language: string; code: string; engine?: string }): Promise<{ ok: boolean }>;
  session(options: { language: string }): Promise<Sessionish>;
  resume(bytes: Uint8Array): Promise<Sessionish>;
  close(): Promise<void>;
}
type CreateSandbox = (options: object) => Promise<Sandboxish>;

const args = process.argv.slice(2);
const sessionsMode = args.includes("--sessions");
const [rev, roundsArg] = args.filter((a) => a !== "--sessions");
if (!rev) {
  console.error(
    "usage: npm run bench:compare -- REV [ROUNDS] [--sessions]   (REV: a commit to compare this tree against)",
  );
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 8);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`bench:compare: ROUNDS must be a positive integer, got "${roundsArg}"`);
  process.exit(2);
}

const { here, commit, base, remove } = checkout(rev, "bench:compare");

/** Each case: a name, the sandbox options, what one call does, and how many calls one round times. */
interface Case {
  what: string;
  options: object;
  /** Prepares what the calls use (a session, a snapshot); called once per side. */
  setup?: (sb: Sandboxish) => Promise<Session>;
  call: (sb: Sandboxish, session: Session) => Promise<unknown>;
  calls: number;
}
interface Session {
  session?: Sessionish;
  bytes?: Uint8Array;
}
const ok = (what: string, r: { ok: boolean }) => {
  if (!r.ok) throw new Error(`${what} failed: ${JSON.stringify(r)}`);
};
const runCase = (what: string, options: object, request: { language: string; code: string }, calls: number): Case => ({
  what,
  options,
  call: async (sb) => ok(what, await sb.run(request)),
  calls,
});

const STATELESS: Case[] = [
  runCase("javascript, thread pool", {}, { language: "javascript", code: "1 + 1" }, 400),
  runCase(
    "javascript, in-process",
    { javascript: { isolation: "in-process" } },
    { language: "javascript", code: "1 + 1" },
    400,
  ),
  runCase("typescript, thread pool", {}, { language: "typescript", code: "const n: number = 2; n * 21" }, 200),
  runCase(
    "python (pyodide), print(1)",
    { python: { pool: 1, snapshot: false } },
    { language: "python", code: "print(1)" },
    40,
  ),
];

// A session that imported json/re/datetime and wrote a file, as bench/sessions.ts uses.
const SESSION_SETUP = "import json, re, datetime\nx = {'k': list(range(100))}\nopen('/tmp/f', 'w').write('x')";
const sessionOptions = { python: { pool: 2 }, sessions: { key: "bench:compare's key, at least 32 characters long" } };
const withSession = async (sb: Sandboxish): Promise<Session> => {
  const session = await sb.session({ language: "python" });
  ok("setup", await session.run({ code: SESSION_SETUP }));
  return { session, bytes: await session.snapshot() };
};
const SESSIONS: Case[] = [
  {
    what: "python session snapshot()",
    options: sessionOptions,
    setup: withSession,
    call: (_, s) => s.session!.snapshot(),
    calls: 40,
  },
  {
    what: "python session fork() + close",
    options: sessionOptions,
    setup: withSession,
    call: async (_, s) => (await s.session!.fork()).close(),
    calls: 40,
  },
  {
    what: "python resume(bytes) + a run + close",
    options: sessionOptions,
    setup: withSession,
    call: async (sb, s) => {
      const r = await sb.resume(s.bytes!);
      ok("resume", await r.run({ code: "x['k'][3]" }));
      await r.close();
    },
    calls: 40,
  },
  {
    what: "python stored call: run + snapshot()",
    options: sessionOptions,
    setup: withSession,
    call: async (_, s) => {
      ok("run", await s.session!.run({ code: "x['k'].append(1)" }));
      await s.session!.snapshot();
    },
    calls: 40,
  },
];
const CASES = sessionsMode ? SESSIONS : STATELESS;

/** Resolves once this side's engine snapshot is cached (built now if it is not). */
async function snapshotReady(create: CreateSandbox): Promise<void> {
  let building = false;
  let built!: () => void;
  const done = new Promise<void>((r) => (built = r));
  const sb = await create({
    python: { pool: 1 },
    onEvent: (e: { type: string }) => {
      if (e.type === "engine.building") building = true;
      if (e.type === "engine.built") built();
    },
  });
  ok("warm-up", await sb.run({ language: "python", code: "1" }));
  if (building) await done;
  await sb.close();
}

async function load(root: string): Promise<CreateSandbox> {
  const mod = (await import(pathToFileURL(join(root, "src/index.ts")).href)) as { createSandbox: CreateSandbox };
  return mod.createSandbox;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

try {
  const sides = [
    { name: commit.slice(0, 7), create: await load(base) },
    { name: "this tree", create: await load(here) },
  ];
  if (sessionsMode) for (const side of sides) await snapshotReady(side.create);
  console.log(`# wasmcell: ${commit.slice(0, 7)} against this tree, ${ROUNDS} alternating rounds\n`);
  console.log(
    `Node ${process.version}, ${os.cpus().length} cpus, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")} at the start\n`,
  );
  console.log("| case | side | p50 ms | p99 ms | this tree / base (p50) |");
  console.log("|---|---|---:|---:|---:|");
  for (const c of CASES) {
    const sandboxes = await Promise.all(sides.map((s) => s.create({ ...c.options })));
    const times: number[][] = sides.map(() => []);
    try {
      const state: Session[] = [];
      for (const sb of sandboxes) state.push((await c.setup?.(sb)) ?? {});
      for (let s = 0; s < sandboxes.length; s++) for (let i = 0; i < 20; i++) await c.call(sandboxes[s]!, state[s]!); // warm
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which side goes first, so neither always follows the other's garbage.
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const s of order) {
          for (let i = 0; i < c.calls / ROUNDS + 1; i++) {
            const t = performance.now();
            await c.call(sandboxes[s]!, state[s]!);
            times[s]!.push(performance.now() - t);
          }
        }
      }
    } finally {
      await Promise.all(sandboxes.map((sb) => sb.close()));
    }
    const p50s = times.map((t) =>
      quantile(
        t.sort((a, b) => a - b),
        0.5,
      ),
    );
    sides.forEach((side, s) => {
      const sorted = times[s]!;
      const ratio = s === 1 ? (p50s[1]! / p50s[0]!).toFixed(2) : "";
      console.log(
        `| ${c.what} | ${side.name} | ${quantile(sorted, 0.5).toFixed(3)} | ${quantile(sorted, 0.99).toFixed(3)} | ${ratio} |`,
      );
    });
  }
} finally {
  remove();
}
