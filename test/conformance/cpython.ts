// CPython's own test suite for the stdlib modules agent code uses, run through `sandbox.run` on both
// Python tiers (the seal and the reset are part of what is tested): each test file is passed in
// `files`, loaded with unittest, and the failing tests come back as the run's value.
//
// - native: Debian's libpython3.11-testsuite for the host's python3 (sources.ts says where it is read
//   from); `test.support` is the interpreter's own.
// - pyodide: Pyodide ships no `test` package, so the tests' own `test.support` package goes in `files` beside
//   the module. The files are the matching CPython tag's Lib/test when WASMCELL_CPYTHON_TESTS_PYODIDE
//   names one; otherwise the same 3.11 files as native, and what fails only because the interpreter is
//   newer is listed as `host: written for 3.11`.
// selection/cpython.txt names the modules; expectations/cpython-<tier>.json lists each skipped or
// failing test with its reason.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createSandbox } from "../../src/index.ts";
import { loadExpectations, type SuiteResult } from "./report.ts";
import { requireRoot, selection } from "./sources.ts";

const here = dirname(new URL(import.meta.url).pathname);

export type Tier = "native" | "pyodide";
export const TIERS: readonly Tier[] = ["native", "pyodide"];

/** Pyodide's CPython version (major.minor), from the lock file of the pyodide package in use. */
export function pyodidePython(): string {
  const lock = join(here, "..", "..", "node_modules", "pyodide", "pyodide-lock.json");
  const info = (JSON.parse(readFileSync(lock, "utf8")) as { info?: { python?: string } }).info;
  return (info?.python ?? "unknown").split(".").slice(0, 2).join(".");
}

/**
 * Where a tier's test files are read from, which CPython version they were written for, and the
 * expectations file that goes with them. Pyodide without a matching checkout runs the native tier's
 * 3.11 files.
 */
export function tierSource(tier: Tier): { root: string; tests: string; expectations: string } {
  const native = { root: requireRoot("cpython"), tests: "3.11", expectations: `cpython-${tier}` };
  if (tier === "native") return native;
  const matching = process.env.WASMCELL_CPYTHON_TESTS_PYODIDE;
  if (!matching) return native;
  if (!existsSync(matching)) throw new Error(`WASMCELL_CPYTHON_TESTS_PYODIDE names ${matching}, which does not exist`);
  const tests = pyodidePython();
  return { root: matching, tests, expectations: `cpython-pyodide-${tests}` };
}

// Runs one module's tests and returns a summary of the failing ones (`skip` names tests not to run).
const DRIVER = (module: string, skip: string[]) => `
import json, sys, unittest
sys.path.insert(0, ".")
skip = set(${JSON.stringify(skip)})
loader = unittest.TestLoader()
suite = loader.loadTestsFromName(${JSON.stringify(module)})
def flat(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from flat(t)
        else:
            yield t
kept = unittest.TestSuite([t for t in flat(suite) if t.id().split(".", 1)[-1] not in skip])
result = unittest.TestResult()
kept.run(result)
def name(t):
    return t.id().split(".", 1)[-1]
failed = [[name(t), (tb.strip().splitlines() or [""])[-1][:300]] for t, tb in result.failures + result.errors]
json.dumps({"run": result.testsRun, "failed": failed, "skipped": len(result.skipped)})
`;

export function cpythonFiles(): string[] {
  return selection("cpython");
}

/**
 * The test file, and on Pyodide (which has no `test` package) the tests' own `test.support` package: the
 * selected modules load nothing else from beside them.
 */
function filesFor(tier: Tier, root: string, file: string): Record<string, string> {
  const files: Record<string, string> = { [file]: readFileSync(join(root, file), "utf8") };
  if (tier === "pyodide") {
    files["test/__init__.py"] = "";
    for (const name of readdirSync(join(root, "support")))
      if (name.endsWith(".py")) files[`test/support/${name}`] = readFileSync(join(root, "support", name), "utf8");
  }
  return files;
}

/** The table's label: the tier, its interpreter, and the tests' version when they differ. */
function label(tier: Tier, tests: string): string {
  const python = tier === "native" ? "3.11" : pyodidePython();
  return `cpython ${tier} (${python}${tests === python ? "" : `, ${tests} tests`})`;
}

export async function runCpython(options: { tiers?: string[]; only?: string[] } = {}): Promise<SuiteResult[]> {
  const tiers = options.tiers ?? [...TIERS];
  const results: SuiteResult[] = [];
  for (const name of tiers) {
    if (!TIERS.includes(name as Tier)) throw new Error(`unknown CPython tier ${name}; known: ${TIERS.join(", ")}`);
    const tier = name as Tier;
    const source = tierSource(tier);
    const sandbox = await createSandbox({ python: { engine: tier } });
    const expectations = loadExpectations(source.expectations);
    const result: SuiteResult = { suite: label(tier, source.tests), files: 0, passed: 0, failures: [], expectations };
    try {
      for (const file of cpythonFiles()) {
        const module = basename(file, ".py");
        if (options.only?.length && !options.only.includes(module)) continue;
        // A module listed as a whole ("*") is not run: one that cannot finish or load here would only
        // cost its deadline every time. Its one entry stands for the module.
        if (expectations.reason(file, "*") !== undefined) {
          result.files++;
          result.failures.push({ file, name: "*", failure: "not run" });
          continue;
        }
        // A test whose entry ends "[not run]" would end the module's run (it crashes the interpreter's
        // host stack, say): it is not run, and its entry stands for it.
        const skip = expectations
          .entries()
          .filter((e) => e.startsWith(`${file} :: `))
          .map((e) => e.slice(file.length + 4))
          .filter((name) => expectations.reason(file, name)?.endsWith("[not run]"));
        for (const name of skip) result.failures.push({ file, name, failure: "not run" });
        const r = await sandbox.run({
          language: "python",
          engine: tier,
          code: DRIVER(module, skip),
          files: filesFor(tier, source.root, file),
          limits: { timeoutMs: 120_000, memoryMb: 512, maxOutputBytes: 4 * 1024 * 1024 },
        });
        result.files++;
        if (!r.ok) {
          result.failures.push({ file, name: "(file)", failure: `${r.error.kind}: ${r.error.message.slice(0, 300)}` });
          continue;
        }
        const s = JSON.parse(String(r.value)) as { run: number; failed: Array<[string, string]>; skipped: number };
        for (const [name, failure] of s.failed) result.failures.push({ file, name, failure });
        result.passed += s.run - s.failed.length - s.skipped;
      }
    } finally {
      await sandbox.close();
    }
    results.push(result);
  }
  return results;
}
