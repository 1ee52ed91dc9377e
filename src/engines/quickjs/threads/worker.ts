// The entry of one QuickJS worker thread: a warm in-process QuickJS engine (src/engines/quickjs) that
// answers runs posted by the host. Guest code runs here, never on the host's thread. What the guest may
// reach on the host goes back over the port as data: host-function calls (the host calls the real
// function and replies), output chunks, and the result.
//
// A run the engine cannot stop (a C builtin that never polls the interrupt handler) blocks this thread;
// the host then terminates it. Nothing here has to clean up after that: the thread and its memory go.

import { readlinkSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import type { ResolvedRequest } from "../../../options/index.ts";
import type { HostFunction, RunResult, WasmModuleSource } from "../../../core/types.ts";
import { epochNow } from "../../../kit/deadline.ts";
import { crashed as engineCrash, failedRun } from "../../../kit/failures.ts";
import { QuickJSEngine, type QuickJSSession } from "../../lib/quickjs/index.ts";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../core/errors.ts";
import { forkState, liveState, restoreState } from "../state-codec.ts";
import { isStripperLoaded, loadStripper } from "../../lib/quickjs/source.ts";
import { setPollHook } from "../../lib/quickjs/poll-hook.ts";
import { setTurnHook, turnTotal, type TurnClock } from "../../lib/quickjs/turns.ts";
import { Demoter } from "./priority.ts";
import {
  CLAIMED,
  collectErrors,
  CREDIT_OFFSET,
  TURN_TOTAL_OFFSET,
  DOORBELL_OFFSET,
  HEARTBEAT_MS,
  HEARTBEAT_OFFSET,
  HOLDER_OFFSET,
  IDLE,
  IDLE_STATE_OFFSET,
  LINGERING,
  NICE_OFFSET,
  PROGRESS_RING,
  TID_OFFSET,
  TIDYING,
  type HostMessage,
  type WireRequest,
  type WorkerMessage,
} from "./protocol.ts";

if (!parentPort) throw new Error("wasmcell: the QuickJS worker entry must run in a worker thread");

const port = parentPort;
const post = (m: WorkerMessage): void => port.postMessage(m);
const data = workerData as {
  progress: SharedArrayBuffer;
  wasmModule: WasmModuleSource | undefined;
  /** How long the thread lingers on its doorbell after a run (handle.ts's LINGER_MS). */
  lingerMs: number;
};
const progress = data.progress;
const begunSeq = new Int32Array(progress, 0, 1);
const begunAt = new Float64Array(progress, 8, PROGRESS_RING);
const heartbeat = new Float64Array(progress, HEARTBEAT_OFFSET, 1);
// This thread's id, for the host's CPU reading (handle.ts); /proc/thread-self is "PID/task/TID".
let tid = 0;
try {
  tid = Number(/\/task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"))?.[1] ?? 0);
  if (Number.isSafeInteger(tid)) Atomics.store(new Int32Array(progress, TID_OFFSET, 1), 0, tid);
} catch {
  // Not Linux: the host judges stalls by the heartbeat alone, and no thread is demoted.
}
let seq = 0;
/** Messages this thread has received; the host's doorbell counts the ones it posted (protocol.ts). */
let received = 0;
const doorbell = new Int32Array(progress, DOORBELL_OFFSET, 1);
const idleState = new Int32Array(progress, IDLE_STATE_OFFSET, 1);
// A stretch is the time since the heartbeat was last written, which happens whenever the loop turns.
const demoter = new Demoter(new Int32Array(progress, NICE_OFFSET, 1), tid, () => heartbeat[0] ?? 0);
setPollHook((stopping) => demoter.poll(stopping));

// Which run holds the thread, and each open run's credit (turns.ts), for the host's deadline watch.
const holder = new Int32Array(progress, HOLDER_OFFSET, 1);
const credit = new Float64Array(progress, CREDIT_OFFSET, PROGRESS_RING);
const total = new Float64Array(progress, TURN_TOTAL_OFFSET, 1);
/** Open runs by their request's `limits` object, the tag their TurnClock carries. */
const byTag = new WeakMap<object, ActiveRun>();
setTurnHook((event, clock) => {
  const run = byTag.get(clock.tag);
  if (!run) return;
  if (event === "open") {
    run.clock = clock;
    credit[run.seq % PROGRESS_RING] = clock.spentMark;
  } else if (event === "enter") {
    Atomics.store(holder, 0, run.seq);
    // A stretch of guest code starts here: the host-side work before it (building the run's runtime,
    // installing its globals) is not the guest's CPU loop, and counting it would lower the thread's
    // priority for nearly every run that begins while others are parked (priority.ts).
    beat();
  } else if (event === "park" || event === "unpark") {
    // The host counts parked runs apart from running ones (admission, placement): one message each way.
    if (runs.get(run.id) === run) post({ t: "park", id: run.id, parked: event === "park" });
  } else {
    Atomics.store(holder, 0, 0);
    // One write for the run that left and one for the thread: every other run's credit is the total
    // less its own mark, read by the host (protocol.ts, CREDIT_OFFSET).
    credit[run.seq % PROGRESS_RING] = clock.spentMark;
    total[0] = turnTotal();
  }
});

/**
 * The heartbeat the host's scheduler reads (protocol.ts): rewritten on every message, every finished
 * run, and by a timer while runs are open, so it goes stale only while one synchronous stretch holds
 * this thread. The timer runs only while there are runs, so an idle worker does not wake.
 */
const beat = (): void => {
  heartbeat[0] = epochNow();
  demoter.stretchEnded();
};
let beating: NodeJS.Timeout | undefined;
function keepBeating(): void {
  beat();
  if (runs.size > 0 && beating === undefined) beating = setInterval(beat, HEARTBEAT_MS);
  else if (runs.size === 0 && beating !== undefined) {
    clearInterval(beating);
    beating = undefined;
  }
}

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface ActiveRun {
  controller: AbortController;
  calls: Map<number, PendingCall>;
  demote: boolean;
  /** The host's id for it. */
  id: number;
  /** Its sequence number on this worker (the host's key for its begin stamp and credit). */
  seq: number;
  /** Its share of the thread, once the engine made its run (turns.ts). */
  clock?: TurnClock;
}

const engine = new QuickJSEngine(data.wasmModule);
const runs = new Map<number, ActiveRun>();
const sessions = new Map<number, QuickJSSession>();
let callSerial = 0;

/**
 * The run's signal. The host's abort arrives as a message only when this thread's event loop turns,
 * which a synchronous guest loop never lets it do; so `aborted` also reads a flag in shared memory that
 * the host sets at once, and the engine's interrupt handler (which polls `signal.aborted`) sees it
 * within one polling window. The message then fires the real `abort` event for a run that is waiting.
 */
function runSignal(controller: AbortController, flag: Int32Array): AbortSignal {
  const signal = controller.signal;
  Object.defineProperty(signal, "aborted", {
    get: () => Atomics.load(flag, 0) !== 0 || Reflect.get(AbortSignal.prototype, "aborted", signal) === true,
  });
  return signal;
}

function hostProxy(id: number, run: ActiveRun, name: string): HostFunction {
  return (args, context) =>
    new Promise((resolve, reject) => {
      const call = ++callSerial;
      run.calls.set(call, { resolve, reject });
      post({ t: "call", id, call, name, args });
      context.signal.addEventListener(
        "abort",
        () => {
          if (run.calls.delete(call)) post({ t: "call-end", id, call });
        },
        { once: true },
      );
    });
}

function resolveWire(id: number, wire: WireRequest, run: ActiveRun): ResolvedRequest {
  const hostFunctions: Record<string, HostFunction> = {};
  for (const name of wire.hostNames) hostFunctions[name] = hostProxy(id, run, name);
  const req: ResolvedRequest = {
    language: wire.language,
    code: wire.code,
    engine: "quickjs",
    files: wire.files,
    limits: wire.limits,
    hostFunctions,
  };
  if (wire.output) req.onOutput = (chunk) => post({ t: "output", id, stream: chunk.stream, text: chunk.text });
  if (wire.display) req.onResult = (item) => post({ t: "display", id, item });
  if (wire.abort) req.signal = runSignal(run.controller, wire.abort);
  return req;
}

function crashed(req: Pick<WireRequest, "language">, message: string): RunResult {
  return failedRun("quickjs", req, engineCrash(message), performance.now());
}

function finish(id: number, result: RunResult): void {
  if (runs.get(id)?.demote) demoter.armed--;
  runs.delete(id);
  keepBeating();
  const marks: Error[] = [];
  const names: string[] = [];
  if (result.ok) collectErrors(result.value, marks, names);
  try {
    post({ t: "done", id, result, marks, names });
    if (runs.size === 0) setImmediate(linger);
  } catch (error) {
    post({
      t: "done",
      id,
      result: crashed(result, `the result could not cross to the host: ${String(error)}`),
      marks: [],
      names: [],
    });
  }
}

/**
 * Called as an immediate after the run's own idle-time work (its context freed, the next one built):
 * sleeps while no run is open and every message posted so far has been handled. A message posted
 * meanwhile rings the doorbell, the wait ends, and the event loop delivers it at once; a hard kill
 * (worker.terminate) interrupts the wait too.
 */
function linger(): void {
  if (runs.size > 0) return;
  if (!starting) {
    Atomics.store(idleState, 0, LINGERING);
    Atomics.wait(doorbell, 0, received, data.lingerMs);
  }
  Atomics.store(idleState, 0, IDLE);
}

function startRun(id: number, wire: WireRequest, sessionId: number | undefined): void {
  // Tell the host this run began (and when) before any of its guest code runs: a shared-memory write,
  // visible even if the guest then holds this thread in a builtin.
  // The sequence counts every run posted here, started or not, to stay in step with the host's count.
  seq++;
  // The host took this run back (it waited behind a long synchronous stretch) and sent it elsewhere.
  if (Atomics.compareExchange(wire.claim, 0, 0, CLAIMED) !== 0) return;
  begunAt[seq % PROGRESS_RING] = epochNow();
  credit[seq % PROGRESS_RING] = turnTotal();
  Atomics.store(begunSeq, 0, seq);
  Atomics.store(idleState, 0, TIDYING);
  const run: ActiveRun = { controller: new AbortController(), calls: new Map(), demote: wire.demote === true, id, seq };
  runs.set(id, run);
  byTag.set(wire.limits, run);
  if (run.demote) demoter.armed++;
  keepBeating();
  const req = resolveWire(id, wire, run);
  const session = sessionId === undefined ? undefined : sessions.get(sessionId);
  if (sessionId !== undefined && !session) {
    finish(id, crashed(wire, "this session is not open in its worker; open a new session"));
    return;
  }
  (session ? session.run(req) : engine.run(req)).then(
    (result) => finish(id, result),
    (error: unknown) => finish(id, crashed(wire, `the engine failed: ${String(error)}`)),
  );
}

function reply(m: Extract<HostMessage, { t: "reply" }>): void {
  const pending = runs.get(m.id)?.calls.get(m.call);
  if (!pending) return;
  runs.get(m.id)?.calls.delete(m.call);
  if (m.ok) {
    pending.resolve(m.json === undefined ? undefined : JSON.parse(m.json));
  } else if (m.unserialisable) {
    // The host's JSON.stringify threw: the engine reports it the same way as in-process, from its own
    // JSON.stringify of the result, so the same error is thrown from there.
    const error = Object.assign(new Error(m.message), { name: m.name });
    pending.resolve({
      toJSON() {
        throw error;
      },
    });
  } else {
    pending.reject(Object.assign(new Error(m.message), { name: m.name }));
  }
}

// A TypeScript run on a thread that has not loaded the parser yet waits for the load before it begins:
// loading takes 0.5 s on a quiet machine and seconds under load, and that is not the guest's time, so
// it counts against neither the run's deadline nor the host's kill watch (which starts when the run
// begins). Runs and session closes posted behind it wait too, because the host reads "the last run
// begun" from one counter, so runs must begin in the order they were posted. A load that fails lets
// the run begin anyway: the engine reports the failure as that run's result.
let starting: Promise<void> | undefined;

function inOrder(start: () => void): void {
  if (!starting) return start();
  const next = starting.then(start);
  starting = next;
  const clear = () => {
    if (starting === next) starting = undefined;
  };
  next.then(clear, clear);
}

function onRunMessage(m: Extract<HostMessage, { t: "run" }>): void {
  const begin = () => startRun(m.id, m.req, m.session);
  if (starting || m.req.language !== "typescript" || isStripperLoaded()) return inOrder(begin);
  const loaded = loadStripper().then(
    () => undefined,
    () => undefined,
  );
  starting = loaded;
  inOrder(begin);
}

/** A new session, one resumed from state bytes, or a fork of one of this worker's sessions. */
function opening(m: Extract<HostMessage, { t: "session-open" }>): Promise<QuickJSSession> {
  if (m.state) return restoreState(engine, m.state, m.maxMemoryBytes ?? 0);
  if (m.forkOf === undefined) return engine.openSession();
  const parent = sessions.get(m.forkOf);
  return parent ? forkState(engine, parent) : Promise.reject(new Error("the session to fork is not open here"));
}

function onMessage(m: HostMessage): void {
  received = (received + 1) | 0; // wraps like the Int32 it is compared with
  beat();
  switch (m.t) {
    case "run":
      onRunMessage(m);
      return;
    case "abort":
      runs.get(m.id)?.controller.abort(new Error("aborted"));
      return;
    case "reply":
      reply(m);
      return;
    case "session-open":
      opening(m).then(
        (session) => {
          sessions.set(m.session, session);
          post({ t: "session-opened", session: m.session, error: undefined });
        },
        (error: unknown) =>
          post(
            error instanceof SnapshotRejectedError
              ? { t: "session-opened", session: m.session, error: error.message, rejected: error.reason }
              : { t: "session-opened", session: m.session, error: String(error) },
          ),
      );
      return;
    case "session-save":
      inOrder(() => {
        const session = sessions.get(m.session);
        if (!session) return post({ t: "session-saved", session: m.session, error: "the session is not open here" });
        liveState(session, m.maxMemoryBytes).then(
          (state) => port.postMessage({ t: "session-saved", session: m.session, state }, [state.buffer as ArrayBuffer]),
          (error: unknown) =>
            post({
              t: "session-saved",
              session: m.session,
              error: (error as Error).message,
              unsupported: error instanceof SnapshotUnsupportedError,
              size: error instanceof SnapshotUnsupportedError && error.reason === "size",
            }),
        );
      });
      return;
    case "session-close":
      inOrder(() => {
        const session = sessions.get(m.session);
        sessions.delete(m.session);
        // A session whose close fails is gone either way; the host already forgot it.
        session?.close().catch(() => undefined);
      });
      return;
  }
}

await engine.warm();
port.on("message", onMessage);
Atomics.store(idleState, 0, IDLE);
post({ t: "ready" });
