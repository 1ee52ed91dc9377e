// What every conformance suite reports, the expectations files, and the one table `npm run conformance`
// prints. An expectations file (expectations/<name>.json) maps a test file to the subtests expected to
// fail there, each with the reason: `{ "url/x.any.js": { "subtest name": "n/a: why" } }`. A `*` in a
// name matches any run of characters (`"* => big5"`); `"*"` alone matches the whole file. A reason starting with "n/a:" is
// a place the box deliberately differs (no legacy encodings, no high-resolution clock, en-US/UTC
// only...): such a test does not apply, and leaves the pass rate. Any other reason ("bug: ...") is a
// known failure that still counts against the rate. An entry no failure matches is reported as stale.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const here = dirname(new URL(import.meta.url).pathname);

export interface Failure {
  file: string;
  name: string;
  failure: string;
}

export interface Expectations {
  /** The reason a subtest is expected to fail, if it is. */
  reason(file: string, name: string): string | undefined;
  /** Every entry, as "file :: name", to find the ones nothing matched. */
  entries(): string[];
}

export interface SuiteResult {
  suite: string;
  files: number;
  passed: number;
  failures: Failure[];
  expectations: Expectations;
  /**
   * Whether an expectations entry no failure matched is reported (true unless said otherwise). test262's
   * baseline lists the bare engine's failures, some of which wasmcell's path passes (it has timers);
   * the runner checks that baseline against the bare engine itself.
   */
  reportStale?: boolean;
}

export function loadExpectations(name: string): Expectations {
  const path = join(here, "expectations", `${name}.json`);
  const table = existsSync(path)
    ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, string>>)
    : {};
  return {
    reason(file, subtest) {
      const entries = table[file];
      if (!entries) return undefined;
      if (entries[subtest] !== undefined) return entries[subtest];
      for (const [key, why] of Object.entries(entries)) if (matches(key, subtest)) return why;
      return undefined;
    },
    entries: () => Object.entries(table).flatMap(([file, e]) => Object.keys(e).map((k) => `${file} :: ${k}`)),
  };
}

/** Whether an expectations key names a subtest: exactly, or as a glob where `*` is any run of characters. */
export function matches(key: string, name: string): boolean {
  if (key === name) return true;
  if (!key.includes("*")) return false;
  const pattern = key.split("*").map((part) => part.replace(/[\\^$.+?()[\]{}|]/g, "\\$&"));
  return new RegExp(`^${pattern.join("[^]*")}$`).test(name);
}

export interface Row {
  suite: string;
  files: number;
  passed: number;
  failed: number;
  expected: number;
  notApplicable: number;
  rate: string;
  unexpected: Failure[];
  stale: string[];
}

export function summarize(r: SuiteResult): Row {
  const unexpected: Failure[] = [];
  const matched = new Set<string>();
  let expected = 0;
  let notApplicable = 0;
  let knownBugs = 0;
  const keys = r.expectations.entries();
  for (const f of r.failures) {
    const why = r.expectations.reason(f.file, f.name);
    if (why === undefined) {
      unexpected.push(f);
      continue;
    }
    expected++;
    if (why.startsWith("n/a:")) notApplicable++;
    else knownBugs++;
    for (const k of keys) {
      const [file, name] = k.split(" :: ") as [string, string];
      if (file === f.file && matches(name, f.name)) matched.add(k);
    }
  }
  const applicable = r.passed + unexpected.length + knownBugs;
  return {
    suite: r.suite,
    files: r.files,
    passed: r.passed,
    failed: unexpected.length,
    expected,
    notApplicable,
    rate: applicable ? `${((100 * r.passed) / applicable).toFixed(1)}%` : "-",
    unexpected,
    stale: r.reportStale === false ? [] : keys.filter((k) => !matched.has(k)),
  };
}

/** The table, in Markdown (it is pasted into docs/conformance.md as printed). */
export function table(rows: Row[]): string {
  const head =
    "| suite | files | passed | failed | expected failures (n/a) | pass rate |\n|---|---:|---:|---:|---:|---:|";
  const body = rows.map(
    (r) => `| ${r.suite} | ${r.files} | ${r.passed} | ${r.failed} | ${r.expected} (${r.notApplicable}) | ${r.rate} |`,
  );
  return [head, ...body].join("\n");
}
