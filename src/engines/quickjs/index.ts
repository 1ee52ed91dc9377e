// The JavaScript engine the front door loads: QuickJS in a pool of worker threads (threads.ts), or on
// the caller's own thread (`javascript.isolation: "in-process"`), both behind bounded admission.
//
// In-process mode is the QuickJS engine itself (src/engines/quickjs) with the same admission bound. What
// it does not stop: guest code runs on the caller's thread, so while a run executes, nothing else in the
// process runs; QuickJS's C builtins that never poll the interrupt handler (`indexOf`, `lastIndexOf`,
// `includes` over a 2^32 array-like, a Proxy `ownKeys` with millions of keys) hold the thread past
// the deadline until they return, and a signal aborted from a host timer is seen only between turns.
// On Node both have sessions that are data (engines/sessions/: snapshot, fork, resume, eviction).
// threads.ts is imported only in thread mode, so a runtime without worker threads never loads it.

import type { EngineFactory } from "../engine.ts";
import type * as Threads from "./threads/threads.ts";
import { EngineUnavailableError } from "../../core/errors.ts";
import { withNetwork } from "../lib/quickjs/fetch-gate.ts";
import { InProcessEngine } from "./in-process.ts";
import { inProcessBackend, threadBackend } from "./state-backends.ts";
import { SessionsEngine } from "../sessions/with-sessions.ts";

export { InProcessEngine } from "./in-process.ts";

export const createEngine: EngineFactory = async (options) => {
  const { isolation, workers, maxWorkers, runsPerWorker, maxParked, maxQueue, demoteCpuBound } = options.javascript;
  if (isolation === "in-process") {
    const engine = new InProcessEngine(maxQueue, options.wasmModule, withNetwork);
    await engine.inner.warm();
    // `javascript.wasmModule` may be a promise of a module (WasmModuleSource is any object).
    const compiled: object | undefined =
      options.wasmModule === undefined ? undefined : await Promise.resolve<object>(options.wasmModule);
    return new SessionsEngine(engine, inProcessBackend(engine.inner, options, compiled), options);
  }
  let threads: typeof Threads;
  try {
    threads = await import("./threads/threads.ts");
  } catch (error) {
    throw new EngineUnavailableError(
      "quickjs",
      `javascript.isolation is "thread" but worker threads cannot be used here (${String(error)})`,
      { cause: error },
    );
  }
  // One compiled module for every worker (and every module instance inside them): the caller's, or the
  // package's own .wasm compiled once here, so N workers do not each compile it at start.
  const wasmModule = await threads.compiledQuickJS(options.wasmModule);
  const engine = new threads.ThreadEngine(
    { workers, maxWorkers, runsPerWorker, maxParked, maxQueue },
    wasmModule,
    options.emit,
    { demoteCpuBound },
  );
  try {
    await engine.warm();
  } catch (error) {
    await engine.destroy();
    throw error;
  }
  const compiled = options.wasmModule === undefined ? undefined : wasmModule;
  return new SessionsEngine(engine, threadBackend(engine, options, compiled), options);
};
