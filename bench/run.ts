// `npm run bench [javascript|python|native|scale|parked …]`: runs each area's benchmark in one process, one after
// another, and prints their markdown reports. Numbers are for comparison within one run on one
// machine (ratios), never assertions.
import os from "node:os";

const AREAS = [
  "javascript",
  "javascript-pool",
  "runtime",
  "python",
  "sessions",
  "mcp-sessions",
  "native",
  "data",
  "adapters",
  "server",
  "packages",
  "network",
  "edge",
  "load",
  "scale",
  "floors",
  "traces",
  "parked",
] as const;
type Area = (typeof AREAS)[number];

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(AREAS as readonly string[]).includes(name)) {
    console.error(`bench: unknown area "${name}"; choose from ${AREAS.join(", ")}`);
    process.exit(2);
  }
}
const areas: readonly Area[] = wanted.length > 0 ? (wanted as Area[]) : AREAS;

console.log(`# wasmcell benchmarks\n`);
console.log(
  `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")}\n`,
);
for (const area of areas) {
  const mod = (await import(`./${area}.ts`)) as { bench: () => Promise<string> };
  console.log(await mod.bench());
  console.log();
}
