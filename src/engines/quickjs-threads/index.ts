// The JavaScript engine the front door loads: QuickJS in a pool of worker threads (threads.ts), or on
// the caller's own thread (`javascript.isolation: "in-process"`), both behind bounded admission.
//
// In-process mode is the QuickJS engine itself (src/engines/quickjs) with the same admission bound. What
// it does not stop: guest code runs on the caller's thread, so while a run executes, nothing else in the
// process runs; QuickJS's C builtins that never poll the interrupt handler (`indexOf`, `lastIndexOf`,
// `includes` over a 2^32 array-like, a Proxy `ownKeys` with millions of keys) hold the thread past
// the deadline until they return, and a signal aborted from a host timer is seen only between turns.
// threads.ts is imported only in thread mode, so a runtime without worker threads never loads it.

import type { Engine, EngineFactory, EngineSession } from "../engine.ts";
import type * as Threads from "./threads.ts";
import { EngineUnavailableError } from "../../errors.ts";
import type { ResolvedRequest } from "../../options.ts";
import type { RunResult } from "../../types.ts";
import { Gate, GateAbortedError } from "../../pool/gate.ts";
import { failure } from "../quickjs/failure.ts";
import { QuickJSEngine } from "../quickjs/index.ts";
import { RUNS_AT_ONCE } from "./limits.ts";

/** The in-process QuickJS engine with admission bounded like the thread pool's. */
export class InProcessEngine implements Engine {
  readonly name = "quickjs" as const;
  readonly inner = new QuickJSEngine();
  readonly #gate: Gate;

  constructor(maxQueue: number) {
    this.#gate = new Gate("javascript engine", RUNS_AT_ONCE, maxQueue);
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
      return failure(
        req,
        { kind: "aborted", name: "AbortError", message: "the run was aborted by the caller's signal" },
        startedAt,
      );
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

export const createEngine: EngineFactory = async (options) => {
  const { isolation, workers, maxQueue } = options.javascript;
  if (isolation === "in-process") {
    const engine = new InProcessEngine(maxQueue);
    await engine.inner.warm();
    return engine;
  }
  let threads: typeof Threads;
  try {
    threads = await import("./threads.ts");
  } catch (error) {
    throw new EngineUnavailableError(
      "quickjs",
      `javascript.isolation is "thread" but worker threads cannot be used here (${String(error)})`,
      { cause: error },
    );
  }
  const engine = new threads.ThreadEngine(workers, maxQueue);
  try {
    await engine.warm();
  } catch (error) {
    await engine.destroy();
    throw error;
  }
  return engine;
};
