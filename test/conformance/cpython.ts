// CPython's own test suite for the stdlib modules agent code uses, run through `sandbox.run` on both
// Python tiers (the seal and the reset are part of what is tested): each test module is passed in
// `files` with the helpers and data files it reads, inside the tests' own `test` package (with its
// `test.support`), loaded with unittest, and the failing tests come back as the run's value.
//
// - native: Debian's libpython3.11-testsuite for the host's python3 (sources.ts says where it is read
//   from).
// - pyodide: the Lib/test WASMCELL_CPYTHON_TESTS_PYODIDE names, of Pyodide's own CPython version
//   (scripts/fetch-cpython-tests.sh brings Debian's); otherwise the same 3.11 files as native, and what
//   fails only because the interpreter is newer is listed as `host: written for 3.11`.
// selection/cpython.txt names the modules and their companions; expectations/cpython-<tier>.json (and
// cpython-pyodide-<version>.json for matching files) lists each skipped or failing test with its reason.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { createSandbox } from "../../src/index.ts";
import { loadExpectations, type SuiteResult } from "./report.ts";
import { requireRoot, selection } from "./sources.ts";

const here = dirname(new URL(import.meta.url).pathname);

export type Tier = "native" | "pyodide";
export const TIERS: readonly Tier[] = ["native", "pyodide"];

/** Pyodide's CPython version (major.minor, or in full), from the lock file of the pyodide package in use. */
export function pyodidePython(full = false): string {
  const lock = join(here, "..", "..", "node_modules", "pyodide", "pyodide-lock.json");
  const info = (JSON.parse(readFileSync(lock, "utf8")) as { info?: { python?: string } }).info;
  const version = info?.python ?? "unknown";
  return full ? version : version.split(".").slice(0, 2).join(".");
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
  // fetch-cpython-tests.sh notes the Debian package's version beside the directory: the label says
  // which patch release the tests are of when it is not the interpreter's.
  const noted = join(dirname(matching), "debian-version");
  const tests = existsSync(noted) ? readFileSync(noted, "utf8").trim().replace(/-.*$/, "") : pyodidePython();
  return { root: matching, tests, expectations: `cpython-pyodide-${pyodidePython()}` };
}

const STARTED = "[cpython-test] ";

// 3.11's test_decimal has no load_tests: its test_main() sets both modules' default contexts, adds one
// test per .decTest data file to the two IBM test classes, and runs `all_tests`. These are the same
// steps without running them (the doctests it also runs are left out); 3.12 and later have load_tests.
const LEGACY_MAIN = `
if hasattr(mod, "load_tests") or not hasattr(mod, "all_tests"):
    suite = loader.loadTestsFromModule(mod)
else:
    for m in (mod.C, mod.P):
        mod.init(m)
    mod.TEST_ALL, mod.DEBUG = True, False
    for f in sorted(os.listdir(mod.directory)):
        if f.endswith(".decTest"):
            for cls in (mod.CIBMTestCases, mod.PyIBMTestCases):
                setattr(cls, "test_" + f.split(".")[0], lambda self, p=mod.directory + f: self.eval_file(p))
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in mod.all_tests)
`;

// Runs one module's tests and returns a summary of the failing ones (`skip` names tests not to run). The
// module is imported as `test.<module>`, as CPython's own runner does (its helpers import
// `test.<helper>` and `test.<package>.<submodule>`), and a test's name is its id without that prefix.
// Files passed for a stdlib package are found as part of it, after the interpreter's own: 3.11 keeps
// unittest's tests in `unittest.test`, and Pyodide leaves out `zoneinfo._zoneinfo`.
const DRIVER = (module: string, skip: string[]) => `
import importlib, json, os, re, sys, unittest
sys.path.insert(0, ".")
import importlib.machinery
class Parts:
    # After the interpreter's own finders, so its modules win: a module of a stdlib package that the
    # interpreter lacks, from the files passed (a fresh import of the package keeps finding it).
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname.split(".")[0] not in ("unittest", "zoneinfo") or "." not in fullname:
            return None
        where = os.path.abspath(os.path.join(*fullname.split(".")[:-1]))
        return importlib.machinery.PathFinder.find_spec(fullname, [where]) if os.path.isdir(where) else None
sys.meta_path.append(Parts)
# A name with "*" matches any run of characters, as in the expectations files.
skip = [re.compile("^" + ".*".join(map(re.escape, k.split("*"))) + "$", re.S) for k in ${JSON.stringify(skip)}]
loader = unittest.TestLoader()
mod = importlib.import_module("test." + ${JSON.stringify(module)})
${LEGACY_MAIN}
def flat(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from flat(t)
        else:
            yield t
def name(t):
    n = t.id()
    for prefix in ("test.", ${JSON.stringify(module)} + "."):
        n = n[len(prefix):] if n.startswith(prefix) else n
    return n
kept = unittest.TestSuite([t for t in flat(suite) if not any(k.match(name(t)) for k in skip)])
class Traced(unittest.TestResult):
    # Each test's name on the real stdout before it runs: a run the interpreter does not survive
    # still says which test it was in.
    def startTest(self, test):
        sys.__stdout__.write("${STARTED}" + name(test) + "\\n")
        sys.__stdout__.flush()
        super().startTest(test)
result = Traced()
kept.run(result)
failed = [[name(t), (tb.strip().splitlines() or [""])[-1][:300]] for t, tb in result.failures + result.errors]
json.dumps({"run": result.testsRun, "failed": failed, "skipped": len(result.skipped)})
`;

/**
 * One line of selection/cpython.txt: the test module (`x.py`, or `x/` for a package) and the files
 * beside it that it reads or imports (paths relative to the root; a `/` at the end names a
 * directory). A companion marked `pyodide:` goes to that tier only: the pure-Python twins of C modules
 * (`_pydecimal`, `zoneinfo._zoneinfo`) that Pyodide's stdlib leaves out and the tests import to test
 * both, taken from the tests' own CPython Lib (`../` of the root).
 */
export interface CpythonEntry {
  file: string;
  module: string;
  companions: string[];
}

export function cpythonEntries(): CpythonEntry[] {
  return selection("cpython").map((line) => {
    const [file, ...companions] = line.split(/\s+/) as [string, ...string[]];
    return { file, module: file.replace(/(\.py|\/)$/, ""), companions };
  });
}

export function cpythonFiles(): string[] {
  return cpythonEntries().map((e) => e.file);
}

/** A file, or every file under a directory (bytecode caches left out), by path relative to `root`. */
function tree(root: string, rel: string, into: Record<string, Uint8Array>, at: string): void {
  const path = join(root, rel);
  if (!statSync(path).isDirectory()) {
    into[posix.normalize(at)] = new Uint8Array(readFileSync(path));
    return;
  }
  for (const name of readdirSync(path)) {
    if (name !== "__pycache__") tree(root, posix.join(rel, name), into, posix.join(at, name));
  }
}

/**
 * What a module's run gets in `files`, laid out as the `test` package: its `__init__` and `support`
 * package (Pyodide ships no `test` package; the native tier gets the same files, so both run the
 * tests' own helpers), the module, and its companions. A module that is a file in one CPython version
 * and a package in another (`test_unittest`) is found in either form; a companion the version does
 * not have is left out.
 */
function filesFor(tier: Tier, root: string, entry: CpythonEntry): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  const init = join(root, "__init__.py");
  files["test/__init__.py"] = existsSync(init) ? new Uint8Array(readFileSync(init)) : new Uint8Array();
  tree(root, "support/", files, "test/support");
  const forms = [entry.file, `${entry.module}.py`, `${entry.module}/`];
  const file = forms.find((f) => existsSync(join(root, f)));
  if (!file) throw new Error(`${entry.file} is not in ${root}`);
  tree(root, file, files, `test/${file}`);
  for (const companion of entry.companions) {
    const [only, c] = companion.includes(":") ? companion.split(":", 2) : [tier, companion];
    if (only === tier && c && existsSync(join(root, c))) tree(root, c, files, `test/${c}`);
  }
  return files;
}

/** The table's label: the tier, its interpreter, and the tests' version when they differ. */
function label(tier: Tier, tests: string): string {
  const python = tier === "native" ? "3.11" : pyodidePython(tests.split(".").length > 2);
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
      for (const entry of cpythonEntries()) {
        const { file, module } = entry;
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
          files: filesFor(tier, source.root, entry),
          limits: {
            // A whole module is one run: on Pyodide, test_decimal (the pure module's every arithmetic
            // test) and test_datetime (every test twice) take minutes at a load of 6-11.
            timeoutMs: tier === "pyodide" ? 300_000 : 120_000,
            memoryMb: 512,
            maxOutputBytes: 4 * 1024 * 1024,
            maxFiles: 10_000,
          },
        });
        result.files++;
        if (!r.ok) {
          const running = r.stdout.split("\n").findLast((l) => l.startsWith(STARTED));
          const during = running ? ` (while running ${running.slice(STARTED.length)})` : "";
          const failure = `${r.error.kind}: ${r.error.message.slice(0, 300)}${during}`;
          result.failures.push({ file, name: "(file)", failure });
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
