// `npm run conformance [-- wpt|test262|cpython ...]`: runs the conformance suites (test/conformance/)
// and prints one table; the exit code is 1 when a test failed that no expectations file lists, or an
// expectations entry matched nothing (a fixed failure whose entry must go). `--verbose` lists each.
import { summarize, table, type Row, type SuiteResult } from "../test/conformance/report.ts";
import { suiteRoot, type SuiteName } from "../test/conformance/sources.ts";

const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const picked = args.filter((a) => !a.startsWith("--"));
const suites = picked.length ? picked : ["wpt", "test262", "cpython"];
const known = ["wpt", "test262", "cpython"];
for (const s of suites)
  if (!known.includes(s.split(":")[0]!)) throw new Error(`unknown suite ${s}; known: ${known.join(", ")}`);

const results: SuiteResult[] = [];
const missing: string[] = [];
for (const s of suites) {
  const [name, only] = s.split(":") as [string, string | undefined];
  // A suite whose upstream files are not on this machine is said, never counted as passed.
  const where = suiteRoot(name as SuiteName);
  if ("missing" in where) {
    missing.push(where.missing);
    continue;
  }
  const families = only ? only.split(",") : undefined;
  if (name === "wpt")
    results.push(...(await (await import("../test/conformance/wpt.ts")).runWpt({ ...(families && { families }) })));
  if (name === "test262")
    results.push(
      ...(await (
        await import("../test/conformance/test262.ts")
      ).runTest262({ ...(families && { dirs: families }), updateBaseline: args.includes("--update-baseline") })),
    );
  if (name === "cpython")
    results.push(
      ...(await (await import("../test/conformance/cpython.ts")).runCpython({ ...(families && { tiers: families }) })),
    );
}
const rows: Row[] = results.map(summarize);
console.log(table(rows));
for (const m of missing) console.log(`not run: ${m}`);
let bad = false;
for (const r of rows) {
  if (r.unexpected.length || r.stale.length) bad = true;
  if (verbose || r.unexpected.length)
    for (const f of r.unexpected.slice(0, verbose ? Infinity : 20))
      console.log(`${r.suite}: ${f.file} :: ${f.name} :: ${f.failure}`);
  for (const s of r.stale) console.log(`${r.suite}: stale expectation (now passes or no longer exists): ${s}`);
}
process.exitCode = bad ? 1 : 0;
