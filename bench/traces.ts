// What traces cost a run: back-to-back `1 + 1` (JavaScript, worker threads) and `print(1)` (Pyodide)
// with no OpenTelemetry provider (the API is a no-op) and with the SDK registered (NodeTracerProvider,
// a batch processor into an in-memory exporter: the work a real exporter's processor does on the run's
// path), in alternating blocks so drift in the machine's load falls on both alike. Then the tracing
// room's own cost per run without a provider, timed alone.
import { context, propagation, trace } from "@opentelemetry/api";
import { BatchSpanProcessor, InMemorySpanExporter, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createSandbox } from "../src/index.ts";
import type { RunResult } from "../src/core/types.ts";
import { traceRun } from "../src/kit/trace.ts";
import { measure, type Row } from "./measure.ts";

const ROUNDS = 4;

async function withProvider<T>(work: () => Promise<T>): Promise<T> {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  try {
    return await work();
  } finally {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
}

function merge(what: string, rows: Row[]): Row {
  const mean = (f: (r: Row) => number) => rows.reduce((s, r) => s + f(r), 0) / rows.length;
  return { what, runs: rows.reduce((s, r) => s + r.runs, 0), p50: mean((r) => r.p50), p99: mean((r) => r.p99) };
}

export async function bench(): Promise<string> {
  await using sandbox = await createSandbox({ python: { pool: 1 } });
  const cases = [
    { what: "JavaScript `1 + 1`", runs: 500, once: () => sandbox.run({ language: "javascript", code: "1 + 1" }) },
    { what: "Python `print(1)`", runs: 200, once: () => sandbox.run({ language: "python", code: "print(1)" }) },
  ];
  const rows: Row[] = [];
  for (const c of cases) {
    const off: Row[] = [];
    const on: Row[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      off.push(await measure(c.what, c.runs, c.once, 20));
      on.push(await withProvider(() => measure(c.what, c.runs, c.once, 20)));
    }
    rows.push(merge(`${c.what}, no provider`, off), merge(`${c.what}, SDK registered`, on));
  }

  // The room alone: a run's span started and ended with no provider (what every run pays).
  const shape = {
    language: "javascript",
    engine: "quickjs",
    code: "1 + 1",
    files: new Map(),
    hostFunctions: {},
    network: false,
    session: false,
  } as const;
  const done = Promise.resolve({} as RunResult);
  const n = 200_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const span = traceRun(shape, undefined);
    span.within(() => span.wrap({ hostFunctions: {}, emit: undefined }));
    void span.ended(done);
  }
  const perRunUs = ((performance.now() - t) / n) * 1000;

  const table = rows.map((r) => `| ${r.what} | ${r.runs} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} |`).join("\n");
  return `## Traces

Back-to-back runs, ${ROUNDS} alternating blocks each (means of the blocks' p50 and p99), ms:

| run | runs | p50 | p99 |
|---|---|---|---|
${table}

The tracing room without a provider: ${perRunUs.toFixed(2)} µs per run (${n} runs' spans started, wrapped and ended, timed alone).`;
}
