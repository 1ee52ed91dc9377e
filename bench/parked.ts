// Parked runs (docs/javascript.md, "Parked runs"): JavaScript runs that mostly wait take memory, not
// threads. Four measurements, side by side in one process on one machine:
//
// 1. 1,000 runs each awaiting a 1 s host function, library defaults: wall time from the first `run()`
//    to the last answer, the process's peak RSS, and memory per parked run (peak RSS over the idle
//    sandbox's, divided by the runs).
// 2. The same with one `while (true) {}` among them (every run `timeoutMs` 5,000): how many of the
//    other 999 answered, and what the spinner ended as.
// 3. The most runs parked at once that fit in 4 GiB: N runs each awaiting a host function that answers
//    only once all N calls have arrived (so all N are parked together when RSS is read), N growing
//    until the goal (10,000) or the process passes 4 GiB. `WASMCELL_BENCH_PARKED_MAX` lowers the goal.
// 4. The MCP server as shipped (`wasmcell mcp --http`, defaults): 100 concurrent `run_code` calls (10
//    clients × 10) that each wait 1 s on a timer: wall time for all 100.
//
// Timings depend on the machine's load, printed with each row: compare within one run.
import os from "node:os";
import { createSandbox } from "../src/index.ts";
import { connectClient, resultText, startReplica } from "../test/helpers/mcp-http.ts";

const WAITERS = 1_000;
const GOAL = Number(process.env.WASMCELL_BENCH_PARKED_MAX ?? 10_000);
const FOUR_GIB = 4 * 1024 ** 3;
const MB = 1024 * 1024;
const WAIT = "const r = await slow(); r + 1";

const load = (): string => os.loadavg()[0]!.toFixed(1);

/** Samples this process's RSS every 20 ms while `body` runs; returns its result and the peak. */
async function peakRss<T>(body: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    const value = await body();
    return { value, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

interface Row {
  what: string;
  load: string;
  wallMs: number;
  answered: string;
  rssMb: number;
  perRunKb: number | undefined;
}

async function waiters(spinner: boolean): Promise<Row> {
  const slow = () => new Promise((r) => setTimeout(() => r(41), 1_000));
  const sandbox = await createSandbox({ javascript: { hostFunctions: { slow } } });
  try {
    const at = load();
    const base = process.memoryUsage.rss();
    const t = performance.now();
    const { value: results, peak } = await peakRss(() =>
      Promise.all(
        Array.from({ length: WAITERS }, (_, i) =>
          sandbox.run({
            language: "javascript",
            code: spinner && i === WAITERS / 2 ? "while (true) {}" : WAIT,
            limits: { timeoutMs: 5_000 },
          }),
        ),
      ),
    );
    const wallMs = performance.now() - t;
    const spin = spinner ? results.splice(WAITERS / 2, 1)[0] : undefined;
    const ok = results.filter((r) => r.ok && r.value === 42).length;
    const kinds = results.filter((r) => !r.ok).map((r) => !r.ok && r.error.kind);
    return {
      what: spinner ? `${WAITERS - 1} waiting + 1 \`while (true) {}\`` : `${WAITERS} waiting 1 s on a host function`,
      load: at,
      wallMs,
      answered:
        `${ok}/${results.length} ok` +
        (kinds.length > 0 ? ` (failed: ${kinds.join(", ")})` : "") +
        (spin ? `; spinner: ${spin.ok ? "ok?!" : spin.error.kind}` : ""),
      rssMb: peak / MB,
      perRunKb: spinner ? undefined : (peak - base) / WAITERS / 1024,
    };
  } finally {
    await sandbox.close();
  }
}

/** N runs parked at once (a barrier host function): the peak RSS, or undefined past 4 GiB. */
async function parkedAtOnce(n: number): Promise<Row> {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => (open = r));
  const rssAtFull: number[] = [];
  const slow = async () => {
    if (++arrived === n) {
      rssAtFull.push(process.memoryUsage.rss());
      open();
    }
    await all;
    return 41;
  };
  const sandbox = await createSandbox({ javascript: { hostFunctions: { slow }, maxParked: n, maxQueue: n } });
  try {
    const at = load();
    const base = process.memoryUsage.rss();
    const t = performance.now();
    const { value: results, peak } = await peakRss(() =>
      Promise.all(
        Array.from({ length: n }, () =>
          sandbox.run({ language: "javascript", code: WAIT, limits: { timeoutMs: 600_000 } }),
        ),
      ),
    );
    const ok = results.filter((r) => r.ok && r.value === 42).length;
    const kinds = new Map<string, number>();
    for (const r of results) if (!r.ok) kinds.set(r.error.kind, (kinds.get(r.error.kind) ?? 0) + 1);
    return {
      what: `${n.toLocaleString("en")} parked at once`,
      load: at,
      wallMs: performance.now() - t,
      answered:
        `${ok}/${n} ok` + (kinds.size > 0 ? ` (failed: ${[...kinds].map(([k, c]) => `${c} ${k}`).join(", ")})` : ""),
      rssMb: peak / MB,
      perRunKb: ((rssAtFull[0] ?? peak) - base) / n / 1024,
    };
  } finally {
    await sandbox.close();
  }
}

async function mcpTimers(): Promise<Row> {
  const replica = await startReplica([]);
  try {
    const clients = await Promise.all(Array.from({ length: 10 }, (_, c) => connectClient(replica.url, `c${c}`)));
    // One warm-up call per client (sessions opened, the pool's first runs), not measured.
    await Promise.all(
      clients.map((c) => c.callTool({ name: "run_code", arguments: { language: "javascript", code: "1" } })),
    );
    const at = load();
    const t = performance.now();
    const texts = await Promise.all(
      clients.flatMap((c, k) =>
        Array.from({ length: 10 }, async (_, i) =>
          resultText(
            await c.callTool({
              name: "run_code",
              arguments: {
                language: "javascript",
                code: `await new Promise((r) => setTimeout(r, 1000)); ${k * 10 + i}`,
              },
            }),
          ),
        ),
      ),
    );
    const wallMs = performance.now() - t;
    const ok = texts.filter((text, j) => text.endsWith(`value: ${j}`)).length;
    await Promise.all(clients.map((c) => c.close()));
    let rss = 0;
    try {
      const { readFileSync } = await import("node:fs");
      rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${replica.child.pid}/status`, "latin1"))?.[1] ?? 0) * 1024;
    } catch {
      // not Linux
    }
    return {
      what: "MCP `wasmcell mcp --http`: 100 calls (10 clients × 10) waiting 1 s on a timer",
      load: at,
      wallMs,
      answered: `${ok}/100 ok`,
      rssMb: rss / MB,
      perRunKb: undefined,
    };
  } finally {
    replica.child.kill("SIGTERM");
    await replica.exited;
  }
}

export async function bench(): Promise<string> {
  const rows: Row[] = [];
  rows.push(await waiters(false));
  rows.push(await waiters(true));
  let most: Row | undefined;
  for (const n of [2_000, 5_000, 10_000].filter((n) => n <= GOAL)) {
    const row = await parkedAtOnce(n);
    rows.push(row);
    if (row.rssMb * MB > FOUR_GIB) break;
    most = row;
  }
  rows.push(await mcpTimers());
  const fmt = (n: number | undefined, digits = 0) => (n === undefined ? "" : n.toFixed(digits));
  return [
    `## Parked runs (\`npm run bench parked\`, ${os.cpus().length} cores)`,
    "",
    "| what | load | wall (ms) | answered | peak RSS (MB) | per parked run (KB) |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) => `| ${r.what} | ${r.load} | ${fmt(r.wallMs)} | ${r.answered} | ${fmt(r.rssMb)} | ${fmt(r.perRunKb)} |`,
    ),
    "",
    `Most parked at once within 4 GiB: ${most ? most.what : "none of the sizes tried"} (goal ${GOAL.toLocaleString("en")}).`,
  ].join("\n");
}
