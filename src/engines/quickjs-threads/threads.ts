// The JavaScript engine with guest code off the host's thread: a pool of worker threads, each holding a
// warm in-process QuickJS engine (worker.ts), plus one warm spare.
//
// - Admission is bounded (src/pool/gate.ts): up to RUNS_AT_ONCE runs per worker at once, then
//   `javascript.maxQueue` waiting, then `QueueFullError`. A worker's engine keeps that many warm cells,
//   so admitted runs never build a runtime from scratch.
// - A run goes to the least-loaded worker. The worker marks in shared memory when it begins a run,
//   before any guest code; the host watches the run's deadline from then. Past `timeoutMs + KILL_GRACE_MS` with no answer (a C
//   builtin that never polls QuickJS's interrupt handler), the worker is **terminated** and the run
//   reports `timeout`. The spare takes the worker's place at once and a new spare starts behind it.
//   Runs that were posted to the dead worker but had not started move to another worker untouched;
//   runs that had started there (parked on a timer or host call beside the runaway) end as `crashed`.
// - Host functions, output chunks and the caller's signal are proxied over the worker's port: the
//   real host function runs here, on the host, with the worker's engine counting calls and enforcing
//   the deadline exactly as in-process.
// - A session is pinned to one worker; when that worker is terminated the session is lost, and says so.

import { readFile } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import type { Engine, EngineSession } from "../engine.ts";
import { InFlight } from "../in-flight.ts";
import { ClosedError, EngineStartError } from "../../errors.ts";
import type { ResolvedRequest } from "../../options.ts";
import type { ErrorKind, GuestError, RunResult, WasmModuleSource } from "../../types.ts";
import { InvalidOptionError } from "../../errors.ts";
import { isWasmModule } from "../../options.ts";
import { Gate, GateAbortedError } from "../../pool/gate.ts";
import {
  parseResult,
  parseWorkerMessage,
  PROGRESS_BYTES,
  PROGRESS_RING,
  type HostMessage,
  type WireRequest,
  type WorkerMessage,
} from "./protocol.ts";
import { failure } from "../quickjs/failure.ts";
import { withNetwork } from "../quickjs/fetch-gate.ts";
import { RUNS_AT_ONCE } from "./limits.ts";

/**
 * The compiled QuickJS module the workers instantiate: `javascript.wasmModule` when given (a module or
 * a promise of one), else the variant package's own .wasm compiled once here. A compiled module crosses
 * to a worker by structured clone without being compiled again.
 */
export async function compiledQuickJS(given: WasmModuleSource | undefined): Promise<WasmModuleSource> {
  if (given !== undefined) {
    const compiled: unknown = await Promise.resolve(given);
    if (!isWasmModule(compiled))
      throw new InvalidOptionError("javascript.wasmModule", "resolved to something that is not a WebAssembly.Module");
    return compiled as WasmModuleSource;
  }
  const file = fileURLToPath(import.meta.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
  const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModuleSource> } })
    .WebAssembly;
  return wasm.compile(await readFile(file));
}

/** How long past its deadline a run's worker may stay silent before it is terminated. */
export const KILL_GRACE_MS = 250;
/**
 * The worker's native stack, as big as the main thread's (V8's ~1 MB default): the QuickJS engine's
 * stack clamp and its handling of C recursion that outruns the host stack were measured against it, so
 * a run behaves the same in a worker as in-process (a worker's default is 4 MB).
 */
const HOST_STACK_MB = 1;
/** How long a worker may take to start (load the engine, instantiate QuickJS) before it counts as failed. */
const START_TIMEOUT_MS = 30_000;

function workerEntry(): string {
  // The entry sits next to this module with the same extension (.ts from source, .js when built).
  const self = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`./worker${self.slice(self.lastIndexOf("."))}`, import.meta.url));
}

/**
 * The host's Node flags minus those about the main entry (`--input-type`, `-e`/`-p` and their
 * argument): a worker started from a file refuses them, and a host run as `node --input-type=module -e`
 * must still get its workers. Undefined (inherit, Node's own handling) when there is nothing to drop:
 * an explicit list is validated more strictly than the inherited one.
 */
function workerExecArgv(): string[] | undefined {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith("--input-type=")) continue;
    if (["--input-type", "-e", "--eval", "-p", "--print"].includes(a)) {
      i++;
      continue;
    }
    out.push(a);
  }
  return out.length === args.length ? undefined : out;
}

function execArgvOption(): { execArgv?: string[] } {
  const execArgv = workerExecArgv();
  return execArgv ? { execArgv } : {};
}

interface Job {
  id: number;
  req: ResolvedRequest;
  wire: WireRequest;
  session: ThreadSession | undefined;
  startedAt: number;
  /** Its sequence number on the worker it was last posted to. */
  seq: number;
  settled: boolean;
  resolve(result: RunResult): void;
  watchdog: NodeJS.Timeout | undefined;
  calls: Map<number, AbortController>;
  outputChars: number;
  cleanup: (() => void) | undefined;
}

class WorkerHandle {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  readonly jobs = new Map<number, Job>();
  readonly sessions = new Map<number, ThreadSession>();
  dead = false;
  readonly #progress = new SharedArrayBuffer(PROGRESS_BYTES);
  readonly #begunSeq = new Int32Array(this.#progress, 0, 1);
  readonly #begunAt = new Float64Array(this.#progress, 8, PROGRESS_RING);
  #posted = 0;
  /** It answered `ready` once: only such a worker is replaced when it is lost (no restart loop). */
  started = false;
  #referenced = true;

  constructor(
    wasmModule: WasmModuleSource | undefined,
    onMessage: (handle: WorkerHandle, m: WorkerMessage) => void,
    onExit: (handle: WorkerHandle, why: string) => void,
  ) {
    this.worker = new Worker(workerEntry(), {
      workerData: { progress: this.#progress, wasmModule },
      ...execArgvOption(),
      resourceLimits: { stackSizeMb: HOST_STACK_MB },
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new EngineStartError("a QuickJS worker thread did not start in time")),
        START_TIMEOUT_MS,
      );
      const fail = (why: string) => {
        clearTimeout(timer);
        reject(new EngineStartError(`a QuickJS worker thread failed to start: ${why}`));
      };
      this.worker.on("message", (data: unknown) => {
        const m = parseWorkerMessage(data);
        if (!m) {
          onExit(this, "it sent a malformed message");
          return;
        }
        if (m.t === "ready") {
          clearTimeout(timer);
          this.started = true;
          this.updateRef();
          resolve();
          return;
        }
        onMessage(this, m);
      });
      this.worker.on("error", (error) => {
        fail(String(error));
        onExit(this, `it threw ${String(error)}`);
      });
      this.worker.on("exit", (code) => {
        fail(`it exited with code ${code}`);
        onExit(this, `it exited with code ${code}`);
      });
    });
    this.ready.catch(() => undefined);
  }

  /** Runs posted and not answered by the worker, including session runs. */
  get load(): number {
    return this.jobs.size;
  }

  /** Posts a run; returns its sequence number on this worker. */
  postRun(m: HostMessage): number {
    this.post(m);
    return ++this.#posted;
  }

  /** When the worker began run `seq` (epoch ms), or undefined if it has not begun it. */
  begunAt(seq: number): number | undefined {
    if (seq === 0 || Atomics.load(this.#begunSeq, 0) < seq) return undefined;
    return this.#begunAt[seq % PROGRESS_RING];
  }

  post(m: HostMessage): void {
    this.worker.postMessage(m);
    this.updateRef();
  }

  /** Sessions asked for and not yet answered: the caller is awaiting them like a run. */
  opening = 0;

  /** An idle worker does not keep the host process alive; one with work (or a session opening) does. */
  updateRef(): void {
    const want = this.jobs.size > 0 || this.opening > 0;
    if (want === this.#referenced) return;
    this.#referenced = want;
    if (want) this.worker.ref();
    else this.worker.unref();
  }

  forget(id: number): Job | undefined {
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    this.updateRef();
    return job;
  }

  terminate(): void {
    this.dead = true;
    void this.worker.terminate();
  }
}

export class ThreadEngine implements Engine {
  readonly name = "quickjs" as const;
  readonly #slots: WorkerHandle[] = [];
  #spare: WorkerHandle | undefined;
  readonly #gate: Gate;
  readonly #inFlight = new InFlight();
  readonly #sessions = new Set<ThreadSession>();
  #serial = 0;
  #closed = false;
  /** Set once every worker is being terminated (close or destroy): nothing new is posted after it. */
  #closedWhy: string | undefined;
  /** Workers terminated because a run overran its deadline (for tests and benchmarks). */
  kills = 0;

  readonly #wasmModule: WasmModuleSource | undefined;

  /** `wasmModule`: compiled once for every worker (see compiledQuickJS); without it each worker loads its own. */
  constructor(workers: number, maxQueue: number, wasmModule?: WasmModuleSource) {
    this.#wasmModule = wasmModule;
    this.#gate = new Gate("javascript pool", workers * RUNS_AT_ONCE, maxQueue);
    for (let i = 0; i < workers; i++) this.#slots.push(this.#start());
  }

  /** Resolves when every worker is ready (and starts the spare); rejects when one cannot start. */
  async warm(): Promise<void> {
    await Promise.all(this.#slots.map((w) => w.ready));
    this.#spare ??= this.#start();
  }

  /** Live worker threads, the spare included. */
  get threads(): number {
    return this.#slots.filter((w) => !w.dead).length + (this.#spare && !this.#spare.dead ? 1 : 0);
  }

  #start(): WorkerHandle {
    return new WorkerHandle(
      this.#wasmModule,
      (handle, m) => this.#onMessage(handle, m),
      (handle, why) => this.#onWorkerLost(handle, why),
    );
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) return Promise.reject(new ClosedError("quickjs engine"));
    return this.#inFlight.track(this.#admit(req));
  }

  async #admit(req: ResolvedRequest): Promise<RunResult> {
    const startedAt = performance.now();
    if (!this.#gate.tryAcquire()) {
      try {
        await this.#gate.acquire(req.signal);
      } catch (error) {
        if (error instanceof GateAbortedError) return failure(req, abortedError(), startedAt);
        throw error;
      }
    }
    try {
      return await this.#dispatch(req, undefined, startedAt);
    } finally {
      this.#gate.release();
    }
  }

  /**
   * The least-loaded live worker; ties go to the first one. (Round-robin between idle workers, so that
   * one builds its next context while the other runs, measured slower: waking a different thread on
   * every call costs more than the context build it hides.)
   */
  async #pick(): Promise<WorkerHandle> {
    let best: WorkerHandle | undefined;
    for (let i = 0; i < this.#slots.length; i++) {
      let w = this.#slots[i]!;
      if (w.dead) w = this.#replace(i);
      if (!best || w.load < best.load) best = w;
    }
    await best!.ready;
    return best!;
  }

  #dispatch(given: ResolvedRequest, session: ThreadSession | undefined, startedAt: number): Promise<RunResult> {
    // The network gate lives here, on the host: its bridge functions join the request's host
    // functions, which the worker proxies back by name like any other (see quickjs/fetch.ts).
    const req = withNetwork(given).req;
    return new Promise<RunResult>((resolve) => {
      const abort = req.signal ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
      if (abort && req.signal?.aborted) Atomics.store(abort, 0, 1);
      const job: Job = {
        id: ++this.#serial,
        req,
        wire: {
          language: req.language,
          code: req.code,
          files: req.files,
          limits: req.limits,
          hostNames: Object.keys(req.hostFunctions),
          output: req.onOutput !== undefined,
          abort,
        },
        session,
        startedAt,
        seq: 0,
        settled: false,
        resolve,
        watchdog: undefined,
        calls: new Map(),
        outputChars: 0,
        cleanup: undefined,
      };
      if (req.signal && abort) {
        const signal = req.signal;
        const onAbort = () => this.#onAbort(job, abort);
        signal.addEventListener("abort", onAbort, { once: true });
        job.cleanup = () => signal.removeEventListener("abort", onAbort);
      }
      void this.#send(job);
    });
  }

  async #send(job: Job): Promise<void> {
    if (this.#closedWhy !== undefined) {
      this.#settle(job, failure(job.req, crashedError(`${this.#closedWhy} before the run started`), job.startedAt));
      return;
    }
    let handle: WorkerHandle;
    try {
      handle = job.session ? job.session.handle : await this.#pick();
    } catch (error) {
      this.#settle(
        job,
        failure(job.req, crashedError(`no QuickJS worker could start (${String(error)})`), job.startedAt),
      );
      return;
    }
    if (job.settled) return;
    if (handle.dead || this.#closedWhy !== undefined) {
      if (job.session) this.#settle(job, failure(job.req, job.session.lostError(), job.startedAt));
      else void this.#send(job);
      return;
    }
    handle.jobs.set(job.id, job);
    const m: HostMessage = job.session
      ? { t: "run", id: job.id, req: job.wire, session: job.session.id }
      : { t: "run", id: job.id, req: job.wire };
    job.seq = handle.postRun(m);
    this.#watch(handle, job, job.req.limits.timeoutMs + KILL_GRACE_MS);
  }

  /**
   * The deadline watch: a run that began more than `timeoutMs + KILL_GRACE_MS` ago and has not been
   * answered has its worker terminated. A run still queued in its worker is looked at again later.
   */
  #watch(handle: WorkerHandle, job: Job, afterMs: number): void {
    clearTimeout(job.watchdog);
    job.watchdog = setTimeout(() => {
      if (job.settled || handle.dead || !handle.jobs.has(job.id)) return;
      const begun = handle.begunAt(job.seq);
      const limit = job.req.limits.timeoutMs + KILL_GRACE_MS;
      if (begun === undefined) return this.#watch(handle, job, limit);
      const left = begun + limit - epochNow();
      if (left > 0) this.#watch(handle, job, left + 1);
      else this.#kill(handle, job, "timeout");
    }, afterMs);
  }

  #onAbort(job: Job, flag: Int32Array): void {
    Atomics.store(flag, 0, 1);
    const handle = this.#holder(job);
    if (!handle) return; // still waiting to be sent: #send posts it with the flag set
    handle.post({ t: "abort", id: job.id });
    if (handle.begunAt(job.seq) === undefined) return; // the worker sees the flag when it starts the run
    // A run stuck in a builtin sees neither the flag nor the message: the grace ends it.
    clearTimeout(job.watchdog);
    job.watchdog = setTimeout(() => this.#kill(handle, job, "aborted"), KILL_GRACE_MS);
  }

  #holder(job: Job): WorkerHandle | undefined {
    for (const w of this.#slots) if (w.jobs.has(job.id)) return w;
    return undefined;
  }

  #onMessage(handle: WorkerHandle, m: WorkerMessage): void {
    const job = "id" in m ? handle.jobs.get(m.id) : undefined;
    switch (m.t) {
      case "output":
        if (!job || job.settled) return;
        // The worker's own sink caps output; this bound only stops a worker that ignores it.
        job.outputChars += m.text.length;
        if (job.outputChars > job.req.limits.maxOutputBytes + 256) return;
        job.req.onOutput?.({ stream: m.stream, text: m.text });
        return;
      case "call":
        if (job && !job.settled) this.#hostCall(handle, job, m);
        return;
      case "call-end":
        job?.calls.get(m.call)?.abort(new Error("the run has ended"));
        job?.calls.delete(m.call);
        return;
      case "done": {
        if (!job) return;
        handle.forget(job.id);
        const parsed = parseResult(m, job.req.language, job.req.limits);
        if (typeof parsed === "string") {
          // A worker that answers out of shape is not trusted with another run.
          this.#settle(
            job,
            failure(job.req, crashedError(`the worker's answer was malformed (${parsed})`), job.startedAt),
          );
          this.#onWorkerLost(handle, `its answer was malformed (${parsed})`);
          return;
        }
        parsed.stats.wallMs = performance.now() - job.startedAt;
        this.#settle(job, parsed);
        return;
      }
      case "session-opened":
        handle.sessions.get(m.session)?.opened(m.error);
        return;
      case "ready": // handled by WorkerHandle
        return;
    }
  }

  #hostCall(handle: WorkerHandle, job: Job, m: Extract<WorkerMessage, { t: "call" }>): void {
    const fn = Object.hasOwn(job.req.hostFunctions, m.name) ? job.req.hostFunctions[m.name] : undefined;
    const send = (r: Extract<HostMessage, { t: "reply" }>) => {
      job.calls.delete(m.call);
      if (!handle.dead && handle.jobs.has(job.id)) handle.post(r);
    };
    const fail = (error: unknown, unserialisable: boolean) => {
      const e = error instanceof Error ? error : new Error(String(error));
      send({
        t: "reply",
        id: job.id,
        call: m.call,
        ok: false,
        name: String(e.name),
        message: String(e.message),
        unserialisable,
      });
    };
    if (!fn) {
      fail(new Error(`${m.name} is not available in this run`), false);
      return;
    }
    const controller = new AbortController();
    job.calls.set(m.call, controller);
    let settled: Promise<unknown>;
    try {
      settled = Promise.resolve(fn(m.args, { signal: controller.signal }));
    } catch (error) {
      settled = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    settled.then(
      (value) => {
        let json: string | undefined;
        try {
          json = value === undefined ? undefined : JSON.stringify(value);
        } catch (error) {
          fail(error, true);
          return;
        }
        send({ t: "reply", id: job.id, call: m.call, ok: true, json });
      },
      (error: unknown) => fail(error, false),
    );
  }

  #settle(job: Job, result: RunResult): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.watchdog);
    job.cleanup?.();
    for (const c of job.calls.values()) c.abort(new Error("the run has ended"));
    job.calls.clear();
    job.resolve(result);
  }

  /**
   * Terminates a worker whose run overran its deadline (or its abort) by more than the grace. The run
   * gets the host's verdict; every other run on that worker is moved or ended, its sessions are lost.
   */
  #kill(handle: WorkerHandle, culprit: Job, kind: "timeout" | "aborted"): void {
    if (handle.dead || culprit.settled) return;
    this.kills++;
    const error: GuestError =
      kind === "timeout"
        ? {
            kind,
            name: "TimeoutError",
            message: `the run did not finish within ${culprit.req.limits.timeoutMs} ms (limits.timeoutMs) and its worker thread did not answer, so it was terminated`,
          }
        : abortedError();
    this.#settle(culprit, failure(culprit.req, error, culprit.startedAt));
    this.#onWorkerLost(handle, "a run on it overran its deadline and the thread was terminated");
  }

  /** A worker is gone (terminated, exited, threw, or misbehaved): move or end its runs, replace it. */
  #onWorkerLost(handle: WorkerHandle, why: string): void {
    if (!handle.dead) handle.terminate();
    const jobs = [...handle.jobs.values()];
    handle.jobs.clear();
    for (const s of handle.sessions.values()) s.lose(why);
    handle.sessions.clear();
    // A worker that never started is not replaced here (that could loop); `#pick` retries on demand.
    const i = this.#slots.indexOf(handle);
    if (i >= 0 && !this.#closed && handle.started) this.#replace(i);
    if (this.#spare === handle) this.#spare = this.#closed || !handle.started ? undefined : this.#start();
    const now = epochNow();
    for (const job of jobs) {
      const begun = handle.begunAt(job.seq);
      if (job.settled) continue;
      clearTimeout(job.watchdog);
      if (job.session) {
        this.#settle(job, failure(job.req, job.session.lostError(), job.startedAt));
      } else if (begun === undefined && !this.#closed) {
        void this.#send(job); // no guest code of it ran: it may run elsewhere
      } else if (begun !== undefined && now - begun > job.req.limits.timeoutMs) {
        this.#settle(
          job,
          failure(
            job.req,
            {
              kind: "timeout",
              name: "TimeoutError",
              message: `the run did not finish within ${job.req.limits.timeoutMs} ms (limits.timeoutMs)`,
            },
            job.startedAt,
          ),
        );
      } else {
        this.#settle(
          job,
          failure(
            job.req,
            crashedError(`the worker thread running this code was lost (${why}); run the code again`),
            job.startedAt,
          ),
        );
      }
    }
  }

  /** Puts the spare (or a new worker) in slot `i` and starts a new spare. */
  #replace(i: number): WorkerHandle {
    const spare = this.#spare && !this.#spare.dead ? this.#spare : this.#start();
    this.#slots[i] = spare;
    this.#spare = this.#closed ? undefined : this.#start();
    return spare;
  }

  async openSession(): Promise<EngineSession> {
    if (this.#closed) throw new ClosedError("quickjs engine");
    const handle = await this.#pick();
    const session = new ThreadSession(this, handle, ++this.#serial, () => this.#sessions.delete(session));
    handle.sessions.set(session.id, session);
    this.#sessions.add(session);
    // Without a job in flight the worker is unref'd: count the open so the process waits for its answer.
    handle.opening++;
    handle.post({ t: "session-open", session: session.id });
    try {
      await session.whenOpen;
    } finally {
      handle.opening--;
      handle.updateRef();
    }
    return session;
  }

  /** @internal used by ThreadSession */
  sessionRun(session: ThreadSession, req: ResolvedRequest): Promise<RunResult> {
    return this.#inFlight.track(this.#dispatch(req, session, performance.now()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#gate.close();
    await this.#inFlight.drain();
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    this.#terminateAll("the engine was closed");
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    this.#gate.close();
    this.#terminateAll("the sandbox was destroyed");
    await this.#inFlight.drain();
  }

  #terminateAll(why: string): void {
    this.#closedWhy = why;
    for (const w of [...this.#slots, ...(this.#spare ? [this.#spare] : [])]) {
      w.terminate();
      this.#onWorkerLost(w, why);
    }
    this.#spare = undefined;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Milliseconds since the epoch, at `performance.now()` precision, comparable with a worker's clock. */
function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

function crashedError(message: string): GuestError {
  return { kind: "crashed", name: "EngineCrash", message };
}

function abortedError(): GuestError {
  return {
    kind: "aborted" satisfies ErrorKind,
    name: "AbortError",
    message: "the run was aborted by the caller's signal",
  };
}

/** A session pinned to one worker; its runs are serialised. */
class ThreadSession implements EngineSession {
  readonly #engine: ThreadEngine;
  readonly handle: WorkerHandle;
  readonly id: number;
  readonly #onClose: () => void;
  readonly whenOpen: Promise<void>;
  #open!: (error?: Error) => void;
  #queue: Promise<unknown> = Promise.resolve();
  #lost: string | undefined;
  #closed = false;

  constructor(engine: ThreadEngine, handle: WorkerHandle, id: number, onClose: () => void) {
    this.#engine = engine;
    this.handle = handle;
    this.id = id;
    this.#onClose = onClose;
    this.whenOpen = new Promise<void>((resolve, reject) => {
      this.#open = (error) => (error === undefined ? resolve() : reject(error));
    });
  }

  /** @internal the worker answered `session-open` */
  opened(error: string | undefined): void {
    this.#open(
      error === undefined ? undefined : new EngineStartError(`the QuickJS worker could not open a session: ${error}`),
    );
  }

  /** @internal the worker under this session is gone */
  lose(why: string): void {
    this.#lost ??= why;
    this.#open(new EngineStartError(`the QuickJS worker was lost while opening a session (${why})`));
  }

  lostError(): GuestError {
    return crashedError(
      `this session was lost: the worker thread holding it was terminated (${this.#lost ?? "it is gone"}); its state is gone, open a new session`,
    );
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    const next = this.#queue.then(() => this.#run(req));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) throw new ClosedError("session");
    if (this.#lost !== undefined) return failure(req, this.lostError(), performance.now());
    return this.#engine.sessionRun(this, req);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#onClose();
    this.handle.sessions.delete(this.id);
    if (!this.handle.dead) this.handle.post({ t: "session-close", session: this.id });
  }
}
