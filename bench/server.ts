// The MCP HTTP server under load: 1, 10 and 50 official MCP clients making 20 `run_code` calls each,
// against one `wasmcell mcp --http --stateless` process and against three behind HAProxy, in three
// mixes: benign only (`n * 7 + 1`); one call in five a CPU loop into the 300 ms deadline; and, as the
// control, one call in five a guest that sleeps into the same deadline (`await` on a timer that never
// fires: the same calls, answers and timeouts, no CPU). Reports calls/s over all calls, benign-call
// p50/p99, each hostile row's calls/s as a share of its benign-only row and of its control, the
// servers' resident memory after the row, and the load average when each row started.
//
// The control separates what the loops cost from what the deadline costs: a client waits out its four
// 300 ms calls either way, so no server makes a mixed row as fast as a benign-only one, and the
// control is the most any handling of the loops could reach.
//
// Each setup is warmed before its first row (two benign rounds of 50 clients and one mixed round, not
// reported): a fresh server's first thousand calls run on code V8 has not optimised yet and cost
// about twice the CPU (1.4 → 2.8 ms per call, measured), which would make whichever row comes first
// look slow and the ratios against it look good.
//
// Each replica's JavaScript pool is sized up front (`--js-workers` = `--js-max-workers`): a loop holds
// its thread for its whole deadline, so the pool must hold the loops in flight plus room for benign
// calls, and growing threads under load (a worker start is ~30 MB and tens of ms of CPU) was measured
// to cost more than it gives. `WASMCELL_BENCH_JS_WORKERS` overrides the one-replica size;
// `WASMCELL_BENCH_JS_WORKERS=default` passes no pool flags at all (every replica sized by the
// library's defaults, as `wasmcell mcp --http` ships); `WASMCELL_BENCH_CLIENTS=50` and
// `WASMCELL_BENCH_REPLICAS=1` narrow the run to those rows.
import { readFileSync } from "node:fs";
import os from "node:os";
import {
  BENIGN,
  HOSTILE,
  connectClient,
  haproxyAvailable,
  resultText,
  startHaproxy,
  startReplica,
  type Replica,
} from "../test/helpers/mcp-http.ts";

const CALLS = 20;
/** The control's "hostile" call: it awaits a timer far past the deadline, so it ends as a timeout having used no CPU. */
const SLEEPER = "await new Promise((resolve) => setTimeout(resolve, 1e9))";
type Mix = "none" | "loop" | "sleep";
const MIXES: Mix[] = ["none", "loop", "sleep"];
const MIX_LABEL: Record<Mix, string> = { none: "none", loop: "1 in 5 loops", sleep: "1 in 5 sleeps" };
const FLAGS = ["--stateless", "--timeout-ms", "300", "--max-inflight-per-client", "256"];
/** Threads per replica, or undefined: no pool flags (`WASMCELL_BENCH_JS_WORKERS=default`). */
const DEFAULT_POOL = process.env.WASMCELL_BENCH_JS_WORKERS === "default";
const ONE_REPLICA_THREADS = DEFAULT_POOL ? undefined : Number(process.env.WASMCELL_BENCH_JS_WORKERS ?? 32);
/** Per replica of three: they share the same cores, so each needs fewer. */
const THREE_REPLICA_THREADS = ONE_REPLICA_THREADS === undefined ? undefined : Math.ceil(ONE_REPLICA_THREADS / 2.5);
const CLIENTS = (process.env.WASMCELL_BENCH_CLIENTS ?? "1,10,50").split(",").map(Number);
const REPLICAS = (process.env.WASMCELL_BENCH_REPLICAS ?? "1,3").split(",").map(Number);
const pool = (n: number | undefined) =>
  n === undefined ? [] : ["--js-workers", String(n), "--js-max-workers", String(n)];

/** Resident memory of the replicas' processes, in bytes (0 where /proc cannot tell). */
function rss(replicas: Replica[]): number {
  let total = 0;
  for (const r of replicas) {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${r.child.pid}/status`, "latin1"))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // not Linux, or it exited
    }
  }
  return total;
}

interface Row {
  setup: string;
  clients: number;
  mix: Mix;
  callsPerS: number;
  p50: number;
  p99: number;
  /** Median time until a hostile call's answer (its deadline is 300 ms). */
  hostileP50: number;
  errors: number;
  load: number;
  /** The replicas' resident memory after the row. */
  rssBytes: number;
  /** Distinct error messages (cut short) and how often each happened. */
  why: Map<string, number>;
}

async function load(url: string, clients: number, mix: Mix): Promise<Omit<Row, "setup" | "rssBytes">> {
  const loadAvg = os.loadavg()[0]!;
  const connected = await Promise.all(Array.from({ length: clients }, (_, c) => connectClient(url, `b${c}`)));
  const times: number[] = [];
  const hostileTimes: number[] = [];
  let errors = 0;
  const why = new Map<string, number>();
  const t0 = performance.now();
  await Promise.all(
    connected.map(async (client, c) => {
      for (let i = 0; i < CALLS; i++) {
        const isHostile = mix !== "none" && (c + i) % 5 === 0;
        const n = c * 1000 + i;
        const t = performance.now();
        try {
          const r = await client.callTool({
            name: "run_code",
            arguments: { language: "javascript", code: isHostile ? (mix === "loop" ? HOSTILE : SLEEPER) : BENIGN(n) },
          });
          const text = resultText(r);
          // A benign call must give its value; a hostile one must end at the deadline, nothing else.
          const right = isHostile ? text.includes("timeout") : text.endsWith(`value: ${n * 7 + 1}`);
          if (!right) {
            errors++;
            const key = `wrong ${isHostile ? "hostile" : "benign"} result: ${text.slice(0, 100)}`;
            why.set(key, (why.get(key) ?? 0) + 1);
          }
          (isHostile ? hostileTimes : times).push(performance.now() - t);
        } catch (error) {
          errors++;
          const key = String(error).slice(0, 120);
          why.set(key, (why.get(key) ?? 0) + 1);
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(connected.map((c) => c.close()));
  const at = (q: number, of = times) => {
    const sorted = [...of].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  };
  return {
    clients,
    mix,
    callsPerS: (clients * CALLS) / seconds,
    p50: at(0.5),
    p99: at(0.99),
    hostileP50: at(0.5, hostileTimes),
    errors,
    load: loadAvg,
    why,
  };
}

async function stop(replicas: Replica[]): Promise<void> {
  for (const r of replicas) r.child.kill("SIGTERM");
  await Promise.all(replicas.map((r) => r.exited));
}

export async function bench(): Promise<string> {
  const rows: Row[] = [];
  const setups: [string, number, number | undefined][] = [];
  if (REPLICAS.includes(1)) setups.push(["1 replica", 1, ONE_REPLICA_THREADS]);
  if (REPLICAS.includes(3) && haproxyAvailable()) setups.push(["3 replicas + HAProxy", 3, THREE_REPLICA_THREADS]);
  for (const [setup, n, threads] of setups) {
    const replicas = await Promise.all(Array.from({ length: n }, () => startReplica([...FLAGS, ...pool(threads)])));
    const lb = n > 1 ? await startHaproxy(replicas.map((r) => r.url)) : undefined;
    const url = lb?.url ?? replicas[0]!.url;
    await load(url, 50, "none");
    await load(url, 50, "none");
    await load(url, 50, "loop");
    for (const clients of CLIENTS) {
      for (const mix of MIXES) rows.push({ setup, ...(await load(url, clients, mix)), rssBytes: rss(replicas) });
    }
    await lb?.close();
    await stop(replicas);
  }
  const ms = (v: number) => (v < 10 ? v.toFixed(1) : v.toFixed(0));
  const share = (r: Row, of: Mix) => {
    const base = rows.find((b) => b.setup === r.setup && b.clients === r.clients && b.mix === of);
    return r.mix !== "none" && r.mix !== of && base ? `${((100 * r.callsPerS) / base.callsPerS).toFixed(0)} %` : "";
  };
  const mb = (r: Row) => (r.rssBytes > 0 ? (r.rssBytes / 2 ** 20).toFixed(0) : "?");
  const lines = [
    `## MCP HTTP server (\`wasmcell mcp --http --stateless --timeout-ms 300\`, ${CALLS} calls per client)`,
    "",
    "Hostile: one call in five is `while (true) {}`, or (the control) a guest sleeping on a timer; both end as `timeout`",
    "at 300 ms. p50/p99 are over the benign calls, hostile p50 over the others; “of benign-only” and “of control” are",
    "the row's calls/s over the same setup's benign-only and sleeping rows. Warmed before the first row. JavaScript",
    ONE_REPLICA_THREADS === undefined
      ? "threads per replica: the library's defaults (no pool flags). RSS: all replicas, after the row."
      : `threads per replica: ${ONE_REPLICA_THREADS} (one replica), ${THREE_REPLICA_THREADS} (each of three). RSS: all replicas, after the row.`,
    "",
    "| setup | clients | hostile | calls/s | of benign-only | of control | benign p50 ms | benign p99 ms | hostile p50 ms | errors | RSS MB | load avg |",
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.setup} | ${r.clients} | ${MIX_LABEL[r.mix]} | ${r.callsPerS.toFixed(0)} | ${share(r, "none")} | ${share(r, "sleep")} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.mix === "none" ? "" : ms(r.hostileP50)} | ${r.errors} | ${mb(r)} | ${r.load.toFixed(1)} |`,
    ),
  ];
  const why = new Map<string, number>();
  for (const r of rows) for (const [k, n] of r.why) why.set(k, (why.get(k) ?? 0) + n);
  if (why.size > 0) lines.push("", "Errors the clients saw:", "", ...[...why].map(([k, n]) => `- ${n} × ${k}`));
  if (!haproxyAvailable()) lines.push("", "(haproxy is not installed: the three-replica rows were not measured)");
  return lines.join("\n");
}

if (import.meta.main) console.log(await bench());
