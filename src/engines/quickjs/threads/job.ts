// One run on the thread pool, as the host holds it: the request, what crosses to the worker, where it
// was posted, and everything it holds on the host (its scope: network and sockets, host calls, the
// deadline watch, the abort listener). A job settles once, and settling lets go of all of it before the
// caller hears the result, on whichever path the run ends (piscina's TaskInfo.done does the same for
// its tasks): no path can forget a resource.

import type { ResolvedRequest } from "../../../options/index.ts";
import type { GuestError, RunResult } from "../../../core/types.ts";
import type { RunScope } from "../../../kit/scope.ts";
import type { WorkerHandle } from "./handle.ts";
import type { WireRequest } from "./protocol.ts";
import { DisplayCollector } from "../../../kit/display.ts";

/** What a job needs of the session it belongs to (session.ts's ThreadSession is one). */
export interface JobSession {
  readonly id: number;
  readonly handle: WorkerHandle<Job>;
  lostError(): GuestError;
}

export class Job {
  readonly id: number;
  readonly req: ResolvedRequest;
  readonly wire: WireRequest;
  readonly session: JobSession | undefined;
  /** When the engine took the run (its wallMs counts from here, queueing included). */
  readonly startedAt: number;
  /**
   * What the run holds on the host, let go when it settles. It outlives a move to another worker: the
   * run goes on.
   */
  readonly scope: RunScope;
  /** Its sequence number on the worker it was last posted to. */
  seq = 0;
  /** The deadline watch (threads.ts); cleared when the job settles. */
  watchdog: NodeJS.Timeout | undefined;
  /** Its host calls still going, by the worker's call number; aborted when the job settles. */
  readonly calls = new Map<number, AbortController>();
  outputChars = 0;
  /** The display items streamed to the caller (parsed and counted here, on the host). */
  readonly display: DisplayCollector;
  /** Waiting for an event (a host call's answer, a timer, a fetch): it takes no turn of its thread. */
  parked = false;
  /** Its thread's CPU time (ns) when its deadline was first seen passed (the starved check). */
  cpuAtDeadline: number | undefined;
  #settled = false;
  readonly #resolve: (result: RunResult) => void;

  constructor(
    init: {
      id: number;
      req: ResolvedRequest;
      wire: WireRequest;
      session: JobSession | undefined;
      startedAt: number;
      /** Made before the job, since the request's network is opened with it. */
      scope: RunScope;
    },
    resolve: (result: RunResult) => void,
  ) {
    this.id = init.id;
    this.req = init.req;
    this.wire = init.wire;
    this.session = init.session;
    this.startedAt = init.startedAt;
    this.scope = init.scope;
    this.display = new DisplayCollector(init.req.limits, init.req.onResult);
    this.#resolve = resolve;
    this.scope.defer(() => clearTimeout(this.watchdog));
    this.scope.defer(() => {
      for (const c of this.calls.values()) c.abort(new Error("the run has ended"));
      this.calls.clear();
    });
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** Ends the run with `result`, once: everything it holds is let go first. False if it had ended. */
  settle(result: RunResult): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.scope.close();
    this.#resolve(result);
    return true;
  }
}
