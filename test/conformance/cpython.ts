// CPython's own test suite for the stdlib modules agent code uses, run through `sandbox.run` on the
// native tier (the seal and the reset are part of what is tested): each test file is passed in
// `files`, loaded with unittest, and the failing tests come back as the run's value. The files are
// Debian's libpython3.11-testsuite for the host's python3 (sources.ts says where they are read from,
// selection/cpython.txt which run); `test.support` is the interpreter's own.
//
// The Pyodide tier (CPython 3.14) is not run here yet: Pyodide ships no `test` package, and the
// matching Lib/test is not available from a package here (see docs/conformance.md).
// expectations/cpython-native.json lists each skipped or failing test with its reason.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createSandbox } from "../../src/index.ts";
import { loadExpectations, type SuiteResult } from "./report.ts";
import { requireRoot, selection } from "./sources.ts";

const root = () => requireRoot("cpython");

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

/** The test file itself: the selected modules load nothing from beside them but `test.support`. */
function filesFor(file: string): Record<string, string> {
  return { [file]: readFileSync(join(root(), file), "utf8") };
}

export async function runCpython(options: { tiers?: string[]; only?: string[] } = {}): Promise<SuiteResult[]> {
  const tiers = options.tiers ?? ["native"];
  const results: SuiteResult[] = [];
  for (const tier of tiers) {
    if (tier !== "native") throw new Error(`the ${tier} tier has no CPython suite here yet (native only)`);
    const sandbox = await createSandbox({ python: { engine: "native" } });
    const expectations = loadExpectations(`cpython-${tier}`);
    const result: SuiteResult = { suite: `cpython ${tier} (3.11)`, files: 0, passed: 0, failures: [], expectations };
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
        const skip: string[] = [];
        const r = await sandbox.run({
          language: "python",
          engine: "native",
          code: DRIVER(module, skip),
          files: filesFor(file),
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
