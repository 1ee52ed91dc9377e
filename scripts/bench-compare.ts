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
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

interface Sandboxish {
  run(request: { language: string; code: string; engine?: string }): Promise<{ ok: boolean }>;
  close(): Promise<void>;
}
type CreateSandbox = (options: object) => Promise<Sandboxish>;

const [rev, roundsArg] = process.argv.slice(2);
if (!rev) {
  console.error("usage: npm run bench:compare -- REV [ROUNDS]   (REV: a commit to compare this tree against)");
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 8);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`bench:compare: ROUNDS must be a positive integer, got "${roundsArg}"`);
  process.exit(2);
}

const here = resolve(import.meta.dirname, "..");
let commit: string;
try {
  commit = execFileSync("git", ["-C", here, "rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  }).trim();
} catch {
  console.error(`bench:compare: REV "${rev}" is not a commit of this repository`);
  process.exit(2);
}
const base = mkdtempSync(join(os.tmpdir(), "wasmcell-compare-"));
execFileSync("git", ["-C", here, "worktree", "add", "--detach", "--quiet", base, commit]);
symlinkSync(join(here, "node_modules"), join(base, "node_modules"));

/** Each case: a name, the sandbox options, the request, and how many calls one round times. */
const CASES = [
  { what: "javascript, thread pool", options: {}, request: { language: "javascript", code: "1 + 1" }, calls: 400 },
  {
    what: "javascript, in-process",
    options: { javascript: { isolation: "in-process" } },
    request: { language: "javascript", code: "1 + 1" },
    calls: 400,
  },
  {
    what: "typescript, thread pool",
    options: {},
    request: { language: "typescript", code: "const n: number = 2; n * 21" },
    calls: 200,
  },
  {
    what: "python (pyodide), print(1)",
    options: { python: { pool: 1, snapshot: false } },
    request: { language: "python", code: "print(1)" },
    calls: 40,
  },
] as const;

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
      for (const sb of sandboxes) for (let i = 0; i < 20; i++) await sb.run(c.request); // warm
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which side goes first, so neither always follows the other's garbage.
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const s of order) {
          for (let i = 0; i < c.calls / ROUNDS + 1; i++) {
            const t = performance.now();
            const r = await sandboxes[s]!.run(c.request);
            times[s]!.push(performance.now() - t);
            if (!r.ok) throw new Error(`${c.what} failed on ${sides[s]!.name}: ${JSON.stringify(r)}`);
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
  execFileSync("git", ["-C", here, "worktree", "remove", "--force", base]);
  rmSync(base, { recursive: true, force: true });
}
