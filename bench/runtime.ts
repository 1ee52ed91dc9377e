// Benchmark of the JavaScript guest runtime (src/engines/lib/quickjs/runtime/): what the web-platform
// globals cost a run. An empty run names no family and installs nothing; code that reaches the global
// object reflectively (`globalThis`, `this`) gets lazy stubs; code that names a family gets it parsed
// and installed before it runs. Interleaved rounds, so machine noise hits every row alike.
//
//   node bench/runtime.ts          prints the markdown report
//
// Not a test: numbers depend on the machine and its load. Nothing here asserts a timing.

import { fileURLToPath } from "node:url";
import { createSandbox } from "../src/index.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_RUNTIME_PER_ROUND ?? 200);

const CASES: [string, string][] = [
  ["empty run (`1 + 1`: no family named, nothing installed)", "1 + 1"],
  ["the JavaScript bench's snippet (no family named)", `({sum: [1, 2, 3].map(x => x * 2).reduce((a, b) => a + b)})`],
  ["reflective (`globalThis.x = 1`: every family as lazy stubs)", "globalThis.x = 1"],
  ["console.assert (console family)", "console.assert(true)"],
  ["new URL (url family)", "new URL('https://a.example/p?q=1').search"],
  ["TextEncoder (dom + encoding families)", "new TextEncoder().encode('hé').length"],
  ["crypto.randomUUID (dom + crypto families)", "crypto.randomUUID().length"],
  ["Intl.NumberFormat (intl family)", "new Intl.NumberFormat('en').format(1234.5)"],
  ["structuredClone (dom + clone families)", "structuredClone({ a: [1] }).a[0]"],
];

export async function bench(): Promise<string> {
  const sandbox = await createSandbox();
  const samples = new Map<string, number[]>(CASES.map(([name]) => [name, []]));
  const run = async (code: string): Promise<void> => {
    const r = await sandbox.run({ language: "javascript", code });
    if (!r.ok) throw new Error(`benchmark run failed: ${r.error.message}`);
  };
  for (const [, code] of CASES) for (let i = 0; i < 50; i++) await run(code); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, code] of CASES) {
      const list = samples.get(name) ?? [];
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await run(code);
        list.push(performance.now() - t);
      }
    }
  }
  await sandbox.close();
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const base = p50(samples.get(CASES[0]![0]) ?? []);
  const lines = [
    "## JavaScript guest runtime (web-platform globals)",
    "",
    `\`sandbox.run\` p50 over ${ROUNDS} × ${PER_ROUND} runs per row, back to back (the next context is built in the run, not in idle time).`,
    "",
    "| code | p50 ms | × empty run |",
    "|---|---:|---:|",
  ];
  for (const [name] of CASES) {
    const v = p50(samples.get(name) ?? []);
    lines.push(`| ${name} | ${v.toFixed(3)} | ${(v / base).toFixed(2)} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await bench());
}
