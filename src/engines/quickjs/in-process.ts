// QuickJS on the caller's own thread, behind the same bounded admission as the thread pool. This is
// the engine of the edge build (Workers, browsers, edge runtimes, Deno, Bun: src/engines/registry.edge.ts)
// and of `javascript.isolation: "in-process"` on Node. What it does not stop: while a run executes,
// nothing else on that thread runs, and QuickJS's C builtins that never poll the interrupt handler
// (`indexOf` over a 2^32 array-like, a Proxy `ownKeys` with millions of keys) hold the thread past the
// deadline until they return. There, the platform's own CPU limit is the backstop.

import type { Engine, EngineFactory, EngineSession } from "../engine.ts";
import { EngineUnavailableError } from "../../core/errors.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import type { RunResult, WasmModuleSource } from "../../core/types.ts";
import { Gate, GateAbortedError } from "../../pool/gate.ts";
import { aborted, failedRun } from "../../kit/failures.ts";
import type { NetworkGate } from "../lib/quickjs/fetch.ts";
import { QuickJSEngine } from "../lib/quickjs/index.ts";
import { MAX_RUNS_PER_WORKER } from "../../options/index.ts";

/** The in-process QuickJS engine with admission bounded like the thread pool's. */
export class InProcessEngine implements Engine {
  readonly name = "quickjs" as const;
  readonly inner: QuickJSEngine;
  readonly #gate: Gate;

  constructor(maxQueue: number, wasmModule?: WasmModuleSource, gate?: NetworkGate) {
    this.inner = new QuickJSEngine(wasmModule, gate);
    this.#gate = new Gate("javascript engine", MAX_RUNS_PER_WORKER, maxQueue);
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#gate.tryAcquire()) return this.#release(this.inner.run(req));
    return this.#queued(req);
  }

  async #queued(req: ResolvedRequest): Promise<RunResult> {
    const startedAt = performance.now();
    try {
      await this.#gate.acquire(req.signal);
    } catch (error) {
      if (!(error instanceof GateAbortedError)) throw error;
      return failedRun("quickjs", req, aborted(), startedAt);
    }
    return this.#release(this.inner.run(req));
  }

  #release(work: Promise<RunResult>): Promise<RunResult> {
    const done = () => this.#gate.release();
    work.then(done, done);
    return work;
  }

  openSession(): Promise<EngineSession> {
    return this.inner.openSession();
  }

  async close(): Promise<void> {
    this.#gate.close();
    await this.inner.close();
  }

  async destroy(): Promise<void> {
    this.#gate.close();
    await this.inner.destroy();
  }
}

/**
 * The edge build's factory: always in-process. A caller who asked for `isolation: "thread"` by name gets
 * an error (a protection asked for and unavailable is never a silent downgrade); the default is honoured.
 */
export const createEngine: EngineFactory = async (options) => {
  if (options.javascript.isolation === "thread" && options.javascript.isolationGiven) {
    throw new EngineUnavailableError(
      "quickjs",
      'javascript.isolation is "thread", but this build of wasmcell (for Workers, browsers, edge runtimes, ' +
        "Deno and Bun) runs JavaScript in-process; use the Node.js build (the `node` export condition) for worker threads",
    );
  }
  const engine = new InProcessEngine(options.javascript.maxQueue, options.wasmModule);
  await engine.inner.warm();
  return engine;
};
