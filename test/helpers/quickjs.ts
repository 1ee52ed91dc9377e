// A warm QuickJS engine for cross-run security tests: one module, one cell serving run after run (the
// in-process equivalent of `pool: 1`), with a way to see which cell served a run so a test can prove the
// cell really was reused, or really was retired.
import assert from "node:assert/strict";
import { QuickJSEngine } from "../../src/engines/lib/quickjs/index.ts";
import type { Cell } from "../../src/engines/lib/quickjs/cell.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import type { ErrorKind, Limits, RunRequest, RunResult } from "../../src/core/types.ts";

export interface WarmCell {
  engine: QuickJSEngine;
  run(code: string, extra?: Partial<RunRequest>): Promise<RunResult>;
  /** The one idle cell the next run will take (asserts there is exactly one). */
  cell(): Cell;
  /** The idle cells of the live module (none right after a cell was retired). */
  idle(): Cell[];
  close(): Promise<void>;
}

export async function warmCell(limits: Partial<Limits> = {}): Promise<WarmCell> {
  const engine = new QuickJSEngine();
  await engine.warm();
  const options = resolveOptions({ limits: { timeoutMs: 2000, ...limits } });
  const run = (code: string, extra: Partial<RunRequest> = {}) =>
    engine.run(resolveRequest({ language: "javascript", code, ...extra }, options));
  const cell = (): Cell => {
    const module = engine.pool.ready();
    assert.ok(module, "the engine has a live module");
    assert.equal(module.idle.length, 1, "exactly one warm cell");
    return module.idle[0] as Cell;
  };
  // The first run creates the cell; from here on every run takes it from the pool.
  const first = await run("0");
  assert.equal(first.ok, true);
  const idle = (): Cell[] => [...(engine.pool.ready()?.idle ?? [])];
  return { engine, run, cell, idle, close: () => engine.close() };
}

/**
 * Guest code that reports everything of the runtime a run can see: globals, the shape of the
 * intrinsics a run could tamper with, files, what the host removed, that the memory cap, stack limit
 * and deadline are the run's own (not an earlier run's), and traces an earlier run tried to leave.
 */
export const CANARY = `
const shape = (o) => Object.getOwnPropertyNames(o).sort().join(",");
({
  globals: shape(globalThis),
  intrinsics: [Object.prototype, Array.prototype, Function.prototype, String.prototype, Promise.prototype, JSON, Math, Symbol]
    .map(shape).join("|"),
  natives: [Array.prototype.map, JSON.stringify, Math.random, Object.prototype.toString].map(String).join("|"),
  polluted: [typeof Object.prototype.polluted, typeof globalThis.leaked, typeof globalThis.x],
  removed: [typeof FinalizationRegistry, typeof InternalError],
  files: fs.readdirSync(),
  registered: Symbol.keyFor(Symbol.for("tenant-secret")),
  memory: new Array(6e5).fill(0).length,
  stack: (function f(n) { return n === 0 ? 0 : 1 + f(n - 1) })(1000),
  deadline: (() => { const t = Date.now(); while (Date.now() - t < 5); return true })(),
})`;

/** A hostile run: code, the limits it runs under, and whether its ending leaves the runtime reusable. */
export interface Hostile {
  name: string;
  code: string;
  limits?: Partial<Limits>;
  /** The run's outcome: ok, or the error kind. */
  outcome: "ok" | ErrorKind;
  /** true when the runtime must be retired after it (the rest must be reused and still be clean). */
  retires: boolean;
}

const JOB = `Promise.resolve().then(() => { globalThis.leaked = 1; for (;;) {} })`;

export const HOSTILE: Hostile[] = [
  {
    name: "pollutes prototypes and globals",
    code: `Object.prototype.polluted = 1; Array.prototype.map = () => 0; JSON.stringify = null; Math.random = () => 4; globalThis.x = 1; "done"`,
    outcome: "ok",
    retires: false,
  },
  {
    name: "writes files",
    code: `fs.writeFileSync("a.txt", "secret"); fs.readdirSync()`,
    outcome: "ok",
    retires: false,
  },
  { name: "floods the console", code: `for (let i = 0; i < 500; i++) console.log(i)`, outcome: "ok", retires: false },
  {
    name: "registers symbols and weak refs",
    code: `Symbol.for("tenant-secret"); globalThis.w = new WeakRef({}); typeof FinalizationRegistry`,
    outcome: "ok",
    retires: false,
  },
  {
    name: "leaves an interval and throws",
    code: `setInterval(() => {}, 1); throw new Error("x")`,
    outcome: "runtime",
    retires: false,
  },
  {
    name: "leaves a host call pending and throws",
    code: `slow(); throw new Error("y")`,
    outcome: "runtime",
    retires: false,
  },
  {
    name: "forges an interrupt",
    code: `throw Object.assign(new Error("interrupted"), { name: "InternalError" })`,
    outcome: "runtime",
    retires: false,
  },
  { name: "imports a module", code: `import fs from "fs"; export default 1`, outcome: "denied", retires: false },
  { name: "has a syntax error", code: `const = 1`, outcome: "syntax", retires: false },
  {
    name: "queues a job from a result getter",
    code: `({ get a() { ${JOB}; return 1 } })`,
    outcome: "ok",
    retires: true,
  },
  {
    name: "queues a job from an error getter",
    code: `const e = new Error(); Object.defineProperty(e, "message", { get() { ${JOB}; return "m" } }); throw e`,
    outcome: "runtime",
    retires: true,
  },
  {
    name: "spins past its deadline",
    code: `for (;;) {}`,
    limits: { timeoutMs: 20 },
    outcome: "timeout",
    retires: true,
  },
  {
    name: "overflows a small stack",
    code: `function f() { return f() + 1 } f()`,
    limits: { maxStackKb: 64 },
    outcome: "stack",
    retires: true,
  },
  {
    name: "hits a small memory cap",
    code: `const a = []; for (;;) a.push({ a })`,
    limits: { memoryMb: 4 },
    outcome: "memory",
    retires: true,
  },
];

/** Host functions the hostile runs use. */
export const HOST_FUNCTIONS = { slow: () => new Promise((resolve) => setTimeout(() => resolve("late"), 30)) };
