// web-platform-tests inside the box: each selected .any.js file (selection/wpt.txt, read from the
// checkout sources.ts names) runs through
// `sandbox.run` on the thread pool AND in-process, after the guest harness (harness/testharness.js)
// and the file's `META: script=` resources; the harness's summary is the run's value. A subtest
// passes only if it passes on both isolations (a difference between them is a failure of its own).
// Each family's expectations file (expectations/wpt-<family>.json) names the subtests expected to fail
// and why; one that passes anyway is reported, so the list cannot silently go stale.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { loadExpectations, type SuiteResult } from "./report.ts";
import { requireRoot, selection } from "./sources.ts";

const here = dirname(new URL(import.meta.url).pathname);
const root = () => requireRoot("wpt");
const HARNESS = readFileSync(join(here, "harness", "testharness.js"), "utf8");

/**
 * The families selected, by directory. The fetch family runs with a network grant so Headers/Request/
 * Response exist; so does structured-clone, whose battery clones Blobs and Responses.
 */
export const FAMILIES: Record<string, { dir: string; network?: boolean; location?: boolean }> = {
  encoding: { dir: "encoding" },
  url: { dir: "url" },
  "dom-events": { dir: "dom/events" },
  "dom-abort": { dir: "dom/abort" },
  webcrypto: { dir: "WebCryptoAPI/digest" },
  "webcrypto-hmac": { dir: "WebCryptoAPI/sign_verify" },
  fetch: { dir: "fetch/api/headers", network: true },
  "fetch-response": { dir: "fetch/api/response", network: true },
  // Its files build Requests from relative URLs, which resolve against the test page's URL: the run
  // sets globalThis.location to it, as the WPT server's page has one (the box itself has none).
  "fetch-request": { dir: "fetch/api/request", network: true, location: true },
  console: { dir: "console" },
  blob: { dir: "FileAPI/blob" },
  file: { dir: "FileAPI/file" },
  "structured-clone": { dir: "html/webappapis/structured-clone", network: true },
};

export function wptFiles(family: string): string[] {
  const entry = FAMILIES[family];
  if (!entry) throw new Error(`unknown WPT family ${family}`);
  const base = root();
  return selection("wpt")
    .filter((f) => f.startsWith(`${entry.dir}/`) && f.endsWith(".any.js"))
    .map((f) => join(base, f));
}

/** The guest program for one test file: the harness, its resources, the file, and the summary. */
export function wptProgram(file: string, withLocation = false): { code: string; files: Record<string, string> } {
  const source = readFileSync(file, "utf8");
  const dir = dirname(file);
  const loads: string[] = [];
  for (const m of source.matchAll(/^\/\/ META: script=(\S+)/gm)) {
    const script = m[1]!;
    // /common/sab.js and /common/subset-tests-by-key.js are shimmed by the harness; any other
    // absolute path is relative to the checkout's root (structured-clone loads its battery so).
    if (script.startsWith("/common/")) continue;
    const path = script.startsWith("/") ? join(root(), script) : join(dir, script);
    loads.push(`__wpt.load(${JSON.stringify(readFileSync(path, "utf8"))}, ${JSON.stringify(script)});`);
  }
  const files: Record<string, string> = {};
  const resources = join(dir, "resources");
  try {
    for (const name of readdirSync(resources))
      if (name.endsWith(".json")) files[`resources/${name}`] = readFileSync(join(resources, name), "utf8");
  } catch {
    // no resources beside this file
  }
  const name = JSON.stringify(relative(root(), file));
  const page = `http://web-platform.test:8000/${relative(root(), file).replace(/\.js$/, ".html")}`;
  const location = withLocation ? `globalThis.location = { href: ${JSON.stringify(page)} };\n` : "";
  const code = `${location}${HARNESS}\n${loads.join("\n")}\n__wpt.load(${JSON.stringify(source)}, ${name});\nawait __wpt.finish()`;
  return { code, files };
}

interface Summary {
  total: number;
  passed: number;
  failed: Array<[string, string, string]>;
  harness: string[];
}

/** What one isolation reports: how many subtests ran, and each failing one's name with its failure. */
async function runOn(
  sandbox: Sandbox,
  file: string,
  withLocation: boolean,
): Promise<{ total: number; failures: Map<string, string> }> {
  const { code, files } = wptProgram(file, withLocation);
  const r = await sandbox.run({ language: "javascript", code, files, limits: { timeoutMs: 60_000 } });
  const failures = new Map<string, string>();
  if (!r.ok) {
    failures.set("(file)", `run failed: ${r.error.kind}: ${r.error.message}`);
    return { total: 1, failures };
  }
  const s = r.value as Summary;
  for (const [name, status, message] of s.failed) failures.set(name, `${status}: ${message}`);
  // A throw while loading the file is one failure of the file (upstream reports it as a harness error).
  if (s.harness.length) failures.set("(load)", s.harness.join("; "));
  return { total: s.total + (s.harness.length ? 1 : 0), failures };
}

export async function runWpt(options: { families?: string[]; sample?: number } = {}): Promise<SuiteResult[]> {
  const families = options.families ?? Object.keys(FAMILIES);
  const results: SuiteResult[] = [];
  for (const family of families) {
    const entry = FAMILIES[family];
    if (!entry) throw new Error(`unknown WPT family ${family}; known: ${Object.keys(FAMILIES).join(", ")}`);
    // The network grant only makes Headers/Request/Response exist; no test here fetches anything.
    const network = entry.network ? { network: { allow: ["conformance.invalid"] } } : {};
    const thread = await createSandbox({ javascript: { isolation: "thread", workers: 1 }, ...network });
    const inProcess = await createSandbox({ javascript: { isolation: "in-process" }, ...network });
    const expectations = loadExpectations(`wpt-${family}`);
    const result: SuiteResult = { suite: `wpt ${family}`, files: 0, passed: 0, failures: [], expectations };
    let files = wptFiles(family);
    if (options.sample) files = files.filter((_, i) => i % options.sample! === 0);
    try {
      for (const file of files) {
        const rel = relative(root(), file);
        const a = await runOn(thread, file, entry.location === true);
        const b = await runOn(inProcess, file, entry.location === true);
        const names = new Set([...a.failures.keys(), ...b.failures.keys()]);
        for (const name of names) {
          const fa = a.failures.get(name);
          const fb = b.failures.get(name);
          const failure =
            fa && fb
              ? fa === fb
                ? fa
                : `${fa} (in-process: ${fb})`
              : fa
                ? `thread only: ${fa}`
                : `in-process only: ${fb}`;
          result.failures.push({ file: rel, name, failure });
        }
        result.passed += Math.max(a.total, b.total) - names.size;
        result.files++;
      }
    } finally {
      await thread.close();
      await inProcess.close();
    }
    results.push(result);
  }
  return results;
}
