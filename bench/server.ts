// The MCP HTTP server under load: 1, 10 and 50 official MCP clients making 20 `run_code` calls each,
// benign only (`n * 7 + 1`) and with one call in five a CPU loop into the 300 ms deadline, against one
// `wasmcell mcp --http --stateless` process and against three behind HAProxy. Reports calls/s over all
// calls, benign-call p50/p99, and the load average when each row started.
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
const FLAGS = ["--stateless", "--timeout-ms", "300", "--max-inflight-per-client", "256"];

interface Row {
  setup: string;
  clients: number;
  hostile: boolean;
  callsPerS: number;
  p50: number;
  p99: number;
  errors: number;
  load: number;
  /** Distinct error messages (cut short) and how often each happened. */
  why: Map<string, number>;
}

async function load(url: string, clients: number, hostile: boolean): Promise<Omit<Row, "setup">> {
  const loadAvg = os.loadavg()[0]!;
  const connected = await Promise.all(Array.from({ length: clients }, (_, c) => connectClient(url, `b${c}`)));
  const times: number[] = [];
  let errors = 0;
  const why = new Map<string, number>();
  const t0 = performance.now();
  await Promise.all(
    connected.map(async (client, c) => {
      for (let i = 0; i < CALLS; i++) {
        const isHostile = hostile && (c + i) % 5 === 0;
        const n = c * 1000 + i;
        const t = performance.now();
        try {
          const r = await client.callTool({
            name: "run_code",
            arguments: { language: "javascript", code: isHostile ? HOSTILE : BENIGN(n) },
          });
          if (!isHostile) {
            if (!resultText(r).endsWith(`value: ${n * 7 + 1}`)) errors++;
            times.push(performance.now() - t);
          }
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
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return {
    clients,
    hostile,
    callsPerS: (clients * CALLS) / seconds,
    p50: at(0.5),
    p99: at(0.99),
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
  const setups: [string, number][] = [["1 replica", 1]];
  if (haproxyAvailable()) setups.push(["3 replicas + HAProxy", 3]);
  for (const [setup, n] of setups) {
    const replicas = await Promise.all(Array.from({ length: n }, () => startReplica(FLAGS)));
    const lb = n > 1 ? await startHaproxy(replicas.map((r) => r.url)) : undefined;
    const url = lb?.url ?? replicas[0]!.url;
    for (const clients of [1, 10, 50]) {
      for (const hostile of [false, true]) rows.push({ setup, ...(await load(url, clients, hostile)) });
    }
    await lb?.close();
    await stop(replicas);
  }
  const ms = (v: number) => (v < 10 ? v.toFixed(1) : v.toFixed(0));
  const lines = [
    `## MCP HTTP server (\`wasmcell mcp --http --stateless --timeout-ms 300\`, ${CALLS} calls per client)`,
    "",
    "Hostile: one call in five is `while (true) {}` (ends as `timeout` at 300 ms). p50/p99 are over the benign calls.",
    "",
    "| setup | clients | hostile | calls/s | benign p50 ms | benign p99 ms | errors | load avg |",
    "|---|---:|---|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.setup} | ${r.clients} | ${r.hostile ? "1 in 5" : "none"} | ${r.callsPerS.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.errors} | ${r.load.toFixed(1)} |`,
    ),
  ];
  const why = new Map<string, number>();
  for (const r of rows) for (const [k, n] of r.why) why.set(k, (why.get(k) ?? 0) + n);
  if (why.size > 0) lines.push("", "Errors the clients saw:", "", ...[...why].map(([k, n]) => `- ${n} × ${k}`));
  if (!haproxyAvailable()) lines.push("", "(haproxy is not installed: the three-replica rows were not measured)");
  return lines.join("\n");
}

if (import.meta.main) console.log(await bench());
