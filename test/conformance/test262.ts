// test262 through wasmcell's own path — `sandbox.run` of a fresh context with the runtime installed
// and the completion value encoded as a result — and through the bare QuickJS release the package
// pins (the same source, a plain context, nothing of wasmcell's), so a test that fails only the first
// way is a failure wasmcell causes. The bare engine's own failures are the baseline
// (expectations/test262-baseline.json), which a full run checks is still exact.
//
// Metadata respected: includes (harness/), flags onlyStrict ("use strict" prologue), noStrict and raw
// (run as written), async ($DONE and its printed verdict), negative (phase parse/runtime, the error
// name). A test that is neither onlyStrict nor noStrict runs once, non-strict. module tests, CanBlock
// tests and those needing host hooks ($262.agent, createRealm, IsHTMLDDA) were left out when the
// subset was chosen (docs/conformance.md says how; selection/test262.txt lists the files).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { createSandbox } from "../../src/index.ts";
import { loadExpectations, type Expectations, type Failure, type SuiteResult } from "./report.ts";
import { requireRoot, selection } from "./sources.ts";

const here = dirname(new URL(import.meta.url).pathname);
const root = () => requireRoot("test262");
const BASELINE = join(here, "expectations", "test262-baseline.json");

// What both paths give the test besides the harness: `print` (the async verdict goes through it) and
// the part of $262 the selected tests use.
const PRELUDE = `var print = function () { console.log(Array.prototype.join.call(arguments, " ")); };
var $262 = { global: globalThis, evalScript: function (s) { return (0, eval)(s); },
  detachArrayBuffer: function (b) { b.transfer(); }, gc: undefined };
`;

interface Meta {
  includes: string[];
  flags: string[];
  negative?: { phase: string; type: string };
}

export function parseMeta(source: string): Meta {
  const block = /\/\*---([\s\S]*?)---\*\//.exec(source)?.[1] ?? "";
  const list = (key: string): string[] => {
    const inline = new RegExp(`^${key}:\\s*\\[(.*?)\\]`, "m").exec(block);
    if (inline)
      return inline[1]!
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    const multi = new RegExp(`^${key}:\\s*\\n((?:\\s+-\\s*\\S+\\n?)+)`, "m").exec(block);
    return multi
      ? multi[1]!
          .split("\n")
          .map((s) => s.replace(/^\s*-\s*/, "").trim())
          .filter(Boolean)
      : [];
  };
  const neg = /^negative:\s*\n\s+phase:\s*(\S+)\s*\n\s+type:\s*(\S+)/m.exec(block);
  return {
    includes: list("includes"),
    flags: list("flags"),
    ...(neg && { negative: { phase: neg[1]!, type: neg[2]! } }),
  };
}

const harnessCache = new Map<string, string>();
function harness(name: string): string {
  let text = harnessCache.get(name);
  if (text === undefined) harnessCache.set(name, (text = readFileSync(join(root(), "harness", name), "utf8")));
  return text;
}

/** The program a test runs as, and what its meta says to expect. */
export function composeTest(file: string): { code: string; meta: Meta } {
  const source = readFileSync(file, "utf8");
  const meta = parseMeta(source);
  if (meta.flags.includes("raw")) return { code: source, meta };
  const includes = [
    "assert.js",
    "sta.js",
    ...(meta.flags.includes("async") ? ["doneprintHandle.js"] : []),
    ...meta.includes,
  ];
  const strict = meta.flags.includes("onlyStrict") ? '"use strict";\n' : "";
  return { code: strict + PRELUDE + includes.map(harness).join("\n") + "\n" + source, meta };
}

interface Ending {
  /** An error's name, when the program threw (or did not parse). */
  error?: string;
  message?: string;
  stdout: string;
}

/** Whether an ending is the one the test expects; the reason when it is not. */
export function verdict(meta: Meta, end: Ending): string | undefined {
  if (meta.negative) {
    if (end.error === meta.negative.type) return undefined;
    return `expected ${meta.negative.type} (${meta.negative.phase}), got ${end.error ? `${end.error}: ${end.message}` : "no error"}`;
  }
  if (end.error) return `${end.error}: ${end.message ?? ""}`.slice(0, 300);
  if (meta.flags.includes("async")) {
    if (end.stdout.includes("Test262:AsyncTestComplete")) return undefined;
    const line = end.stdout.split("\n").find((l) => l.startsWith("Test262:AsyncTestFailure"));
    return line ? line.slice(0, 300) : "async test did not call $DONE";
  }
  return undefined;
}

let bare: Promise<QuickJSWASMModule> | undefined;

/** The same program on the bare engine: a new runtime and context, print, the job queue drained. */
export async function runBare(code: string): Promise<Ending> {
  const module = await (bare ??= newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant));
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(256 * 1024 * 1024);
  const deadline = Date.now() + 10_000;
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const ctx = runtime.newContext();
  let stdout = "";
  try {
    const log = ctx.newFunction("log", (...args) => {
      stdout += args.map((a) => String(ctx.dump(a))).join(" ") + "\n";
    });
    const console = ctx.newObject();
    ctx.setProp(console, "log", log);
    ctx.setProp(ctx.global, "console", console);
    log.dispose();
    console.dispose();
    const r = ctx.evalCode(code, "test.js");
    if (r.error) {
      const e = ctx.dump(r.error) as { name?: string; message?: string } | string;
      r.error.dispose();
      return typeof e === "object" && e !== null
        ? { error: String(e.name), message: String(e.message), stdout }
        : { error: "Thrown", message: String(e), stdout };
    }
    r.value.dispose();
    for (let i = 0; i < 1000 && runtime.hasPendingJob(); i++) {
      const jobs = runtime.executePendingJobs();
      if (jobs.error) jobs.error.dispose();
    }
    return { stdout };
  } finally {
    ctx.dispose();
    runtime.dispose();
  }
}

export function test262Files(dirs?: string[]): string[] {
  const base = root();
  const all = selection("test262")
    .filter((f) => f.startsWith("test/"))
    .map((f) => join(base, f));
  return dirs ? all.filter((f) => dirs.some((d) => relative(join(base, "test"), f).startsWith(d))) : all;
}

export async function runTest262(
  options: { dirs?: string[]; sample?: number; updateBaseline?: boolean } = {},
): Promise<SuiteResult[]> {
  let files = test262Files(options.dirs);
  if (options.sample) files = files.filter((_, i) => i % options.sample! === 0);
  // One worker thread, fresh context per run: wasmcell's own path for agent code.
  const sandbox = await createSandbox({
    javascript: { isolation: "thread", workers: 1 },
    limits: { timeoutMs: 10_000 },
  });
  const baseline = loadExpectations("test262-baseline");
  // The baseline (the engine's own failures) and the places the box deliberately differs.
  const box = loadExpectations("test262-box");
  const expectations: Expectations = {
    reason: (file, name) => baseline.reason(file, name) ?? box.reason(file, name),
    entries: () => [...baseline.entries(), ...box.entries()],
  };
  const result: SuiteResult = {
    suite: "test262",
    files: files.length,
    passed: 0,
    failures: [],
    expectations,
    reportStale: false,
  };
  const bareFailures: Record<string, Record<string, string>> = {};
  const checkBaseline = !options.sample && !options.dirs;
  try {
    for (const file of files) {
      const rel = relative(root(), file);
      const { code, meta } = composeTest(file);
      const r = await sandbox.run({ language: "javascript", code });
      const end: Ending = r.ok
        ? { stdout: r.stdout }
        : {
            error: r.error.kind === "syntax" ? "SyntaxError" : r.error.name,
            message: r.error.message,
            stdout: r.stdout,
          };
      const failure = verdict(meta, end);
      if (failure) result.failures.push({ file: rel, name: "(test)", failure } satisfies Failure);
      else result.passed++;
      if (checkBaseline || options.updateBaseline) {
        const bareFailure = verdict(meta, await runBare(code));
        if (bareFailure) bareFailures[rel] = { "(test)": `engine: the bare QuickJS release fails too: ${bareFailure}` };
      }
    }
  } finally {
    await sandbox.close();
  }
  if (options.updateBaseline) writeFileSync(BASELINE, JSON.stringify(bareFailures, null, 2) + "\n");
  else if (checkBaseline) {
    // The stored baseline must be the bare engine's failures exactly: a drift is a failure of its own.
    const stored = new Set(baseline.entries());
    const now = new Set(Object.keys(bareFailures).map((f) => `${f} :: (test)`));
    for (const k of stored)
      if (!now.has(k))
        result.failures.push({
          file: k.split(" :: ")[0]!,
          name: "(baseline)",
          failure: "the baseline lists this test but the bare engine passes it now",
        });
    for (const k of now)
      if (!stored.has(k))
        result.failures.push({
          file: k.split(" :: ")[0]!,
          name: "(baseline)",
          failure: "the bare engine fails this test but the baseline does not list it",
        });
  }
  return [result];
}
