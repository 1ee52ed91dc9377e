// One run of guest code in a Guest (a user context inside a cell): evaluation, the event loop for
// promises, timers and host calls under one deadline, and turning what happened into a RunResult.
//
// Every entry into WASM that can run guest code is a *turn* (#turn). A turn that throws in the host —
// V8's RangeError when QuickJS's C recursion outruns the host stack, an emscripten abort, a trap — has
// left the module half-unwound: the module is poisoned (never used again) and the run reports `stack`
// or `crashed`. Guest exceptions never throw in the host; they come back as handles and are read by the
// service realm.

import type { QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten-core";
import type { ResolvedRequest } from "../../../options/index.ts";
import type { ErrorKind, GuestError, HostFunction, RunResult } from "../../../core/types.ts";
import type { FsOp, Guest, GuestRunHooks } from "./guest.ts";
import { fsCall } from "./fs-bridge.ts";
import { argumentsAsData, readValue, toGuest } from "./values.ts";
import { FileLimitError, FsError, MemFs } from "./memfs.ts";
import { Deadline } from "../../../kit/deadline.ts";
import { crashed, describeHostError, outputLimit } from "../../../kit/failures.ts";
import { EVAL_FLAGS } from "./internals.ts";
import { OutputSink } from "./text-output.ts";
import { DisplayCollector, parseDisplayItem } from "../../../kit/display.ts";
import { runtimeInspector } from "./runtime/install.ts";
import { Timers, TooManyTimers } from "./timers.ts";
import { TurnClock } from "./turns.ts";
import type { PreparedSource } from "./source.ts";
import {
  classify,
  effectiveStackKb,
  interruptError,
  parseErrorInfo,
  refusedImportMessage,
  type Situation,
} from "./classify.ts";

const MB = 1024 * 1024;
/** Linear-memory growth allowed beyond memoryMb before a run fails with `memory` (allocator slack). */
const MEMORY_SLACK_MB = 32;
/** How long the host may spend reading an exception (guest getters on it included). */
const INSPECT_GRACE_MS = 100;
/** Runs shorter than this do not measure memory (the measurement would be a large share of the run). */
const PEAK_MIN_RUN_MS = 2;
export type { PreparedSource } from "./source.ts";

interface Delivery {
  deferred: QuickJSDeferredPromise;
  ok: boolean;
  value: unknown;
}

/** Host functions the engine itself installs (the fetch bridge); callers may not use the prefix. */
const INTERNAL_HOST_PREFIX = "__wasmcell_net_";

/** An exception the host throws *into* the guest on purpose (bad argument, limit reached). */
class GuestThrow extends Error {}

export class Run implements GuestRunHooks {
  readonly #guest: Guest;
  readonly #req: ResolvedRequest;
  readonly #src: PreparedSource;
  readonly #out: OutputSink;
  readonly #display: DisplayCollector;
  readonly #start = performance.now();
  readonly #deadline: Deadline;
  /** Its share of the thread: the deadline does not count other runs' turns (turns.ts). */
  readonly #clock: TurnClock;
  #fs: MemFs | undefined;
  #failure: GuestError | undefined;
  #interruptKind: ErrorKind | undefined;
  #hostFailure = false;
  readonly #timers: Timers;
  #hostCalls = 0;
  #pendingHost = new Set<QuickJSDeferredPromise>();
  #deliveries: Delivery[] = [];
  #wake: (() => void) | undefined;
  #abortController: AbortController | undefined;
  #handles: QuickJSHandle[] = [];
  #peakBytes = 0;
  #graceUntil: number | undefined;
  /** Linear-memory growth the run may cause (its cap plus the allocator's slack). */
  #memoryCap = Infinity;
  /** Growth while this run's own guest code ran, over its finished turns. */
  #grownBytes = 0;
  /** The module's size when the current turn began; undefined between turns. */
  #turnFrom: number | undefined;
  #refusedImports: string[] = [];

  constructor(guest: Guest, req: ResolvedRequest, src: PreparedSource) {
    this.#guest = guest;
    this.#req = req;
    this.#src = src;
    this.#out = new OutputSink(req.limits.maxOutputBytes, req.onOutput);
    this.#display = new DisplayCollector(req.limits, req.onResult);
    this.#deadline = new Deadline(req.limits.timeoutMs, this.#start);
    this.#clock = new TurnClock(req.limits);
    this.#timers = new Timers(req.limits.maxTimers);
  }

  wake(): void {
    this.#wake?.();
  }

  /** Called by the cell's interrupt handler (many times a millisecond while guest code runs). */
  shouldInterrupt(): boolean {
    // While the host reads an exception or the run's end state, a short grace applies instead.
    if (this.#graceUntil !== undefined) return performance.now() > this.#graceUntil;
    if (this.#interruptKind) return true;
    if (this.#pastDeadline()) {
      this.#interruptKind = "timeout";
      return true;
    }
    if (this.#req.signal?.aborted) {
      this.#interruptKind = "aborted";
      return true;
    }
    // QuickJS does not count every allocation against setMemoryLimit (many small ArrayBuffers slip
    // past it), so the module's linear memory is watched too: growth past the run's cap is a memory
    // failure, caught within one polling window. Only growth while this run's own code ran counts: the
    // module is shared with the other runs of its thread (parked ones by the thousand), and their
    // growth is theirs.
    if (this.#memoryGrown() > this.#memoryCap) {
      this.#interruptKind = "memory";
      return true;
    }
    return false;
  }

  #memoryGrown(): number {
    const from = this.#turnFrom;
    return this.#grownBytes + (from === undefined ? 0 : this.#guest.cell.wasm.memoryBytes() - from);
  }

  /** The deadline, moved later by the time this thread spent on other runs' guest code (turns.ts). */
  #deadlineAt(): number {
    return this.#deadline.at + this.#clock.creditMs;
  }

  #pastDeadline(): boolean {
    return performance.now() >= this.#deadlineAt();
  }

  async execute(): Promise<RunResult> {
    const { cell, ctx } = this.#guest;
    const limits = this.#req.limits;
    cell.setLimits(limits.memoryMb * MB, effectiveStackKb(limits.maxStackKb) * 1024);
    this.#memoryCap = (limits.memoryMb + MEMORY_SLACK_MB) * MB;
    cell.run = this;
    cell.userCtx = ctx;
    cell.runs++;
    this.#guest.hooks = this;
    const onAbort = () => this.#wake?.();
    this.#req.signal?.addEventListener("abort", onAbort);
    let value: unknown;
    try {
      if (this.#req.signal?.aborted) this.#interruptKind = "aborted";
      else value = await this.#main();
    } finally {
      this.#req.signal?.removeEventListener("abort", onAbort);
    }
    return this.#finish(value);
  }

  // ---------------------------------------------------------------------------------------------
  // evaluation and the event loop

  async #main(): Promise<unknown> {
    const { cell, ctx } = this.#guest;
    const src = this.#src;
    let result: QuickJSHandle | undefined;
    cell.armCounter(ctx);
    let module = false;
    this.#turn(() => {
      module = src.module && this.#parsesOnlyAsModule();
      const flags = module ? EVAL_FLAGS.module : src.async ? EVAL_FLAGS.async : 0;
      const r = ctx.evalCode(src.code, src.filename, flags);
      if (r.error) this.#failFromException(r.error, "eval");
      else result = this.#own(r.value);
      if (!this.#failure) this.#drain();
    });
    if (this.#failure || !result) return undefined;

    // The value is reached through promises and wrappers: an async script yields a promise of
    // `{ value }`, a module a (promise of its) namespace whose `default` we want, and any of those
    // may itself be a promise (`export default fetchIt()`, `(async () => 1)()`): each is awaited.
    let unwrap: "value" | "default" | undefined = module ? "default" : src.async ? "value" : undefined;
    let promise: QuickJSHandle | undefined;
    const accept = (h: QuickJSHandle): void => {
      for (let current = h; ;) {
        if (ctx.typeof(current) === "object") {
          const state = ctx.getPromiseState(current);
          if (state.type === "fulfilled" && !state.notAPromise) state.value.dispose();
          if (state.type === "rejected") state.error.dispose();
          if (state.type !== "fulfilled" || !state.notAPromise) {
            promise = current;
            return;
          }
        }
        if (!unwrap) {
          result = current;
          return;
        }
        current = this.#own(ctx.getProp(current, unwrap));
        unwrap = undefined;
      }
    };
    let first = true;

    for (;;) {
      // An interrupt can be swallowed by an async function (its promise just stays pending).
      if (this.#interruptKind && !this.#failure) this.#setFailure(this.#interruptError());
      if (this.#failure) return undefined;
      if (!cell.wasm.alive) return this.#crashedByOther();
      if (first) {
        first = false;
        const initial = result;
        result = undefined;
        if (initial) this.#turn(() => accept(initial));
        continue;
      }
      if (promise) {
        const st = ctx.getPromiseState(promise);
        if (st.type === "rejected") {
          this.#failFromException(st.error, "job");
          return undefined;
        }
        if (st.type === "fulfilled") {
          promise = undefined;
          const settled = this.#own(st.value);
          this.#turn(() => accept(settled));
          continue;
        }
      }
      // Weak timers keep the run alive only while the code awaits something (they may settle it).
      const timersHold = this.#timers.size > 0 && (promise !== undefined || this.#timers.anyStrong());
      const idle = !timersHold && this.#pendingHost.size === 0 && this.#deliveries.length === 0;
      if (idle) {
        if (promise) {
          this.#setFailure({
            kind: "runtime",
            name: "Error",
            message: "the code awaits a promise that can never settle: no timers or host calls are pending",
          });
          return undefined;
        }
        break;
      }
      const parks = this.#deliveries.length === 0;
      if (parks) this.#clock.park(true);
      await this.#waitForEvent();
      if (parks) this.#clock.park(false);
      if (this.shouldInterrupt()) {
        this.#setFailure(this.#interruptError());
        return undefined;
      }
      this.#turn(() => this.#fireEvents());
    }
    if (!result) return undefined;
    let out: unknown;
    const final = result;
    this.#turn(() => {
      out = this.#readValue(final);
    });
    return out;
  }

  /**
   * Whether code that looks like a module (a line starting with import/export, see source.ts) really is
   * one. The look is only a hint: such a line inside a template literal or a comment matches too. Code
   * that QuickJS compiles as a script has no import or export declaration, so it runs as a script; only
   * code that fails to compile as one is evaluated as a module (and reports a module's syntax error).
   */
  #parsesOnlyAsModule(): boolean {
    const { ctx } = this.#guest;
    const flags = EVAL_FLAGS.compileOnly | (this.#src.async ? EVAL_FLAGS.async : 0);
    const r = ctx.evalCode(this.#src.code, this.#src.filename, flags);
    (r.error ?? r.value).dispose();
    return r.error !== undefined;
  }

  /** Runs a step that enters WASM. A host-side throw poisons the module and fails the run. */
  #turn(step: () => void): void {
    const wasm = this.#guest.cell.wasm;
    if (!wasm.alive) {
      this.#crashedByOther();
      return;
    }
    const outer = this.#turnFrom === undefined;
    if (outer) this.#turnFrom = wasm.memoryBytes();
    try {
      this.#clock.turn(step);
    } catch (error) {
      this.#onHostThrow(error);
    } finally {
      if (outer) {
        this.#grownBytes = this.#memoryGrown();
        this.#turnFrom = undefined;
      }
    }
    if (this.#hostFailure) wasm.poison(this.#failure?.message ?? "host failure");
  }

  #onHostThrow(error: unknown): void {
    this.#hostFailure = true;
    const hostStack = error instanceof RangeError && /call stack/i.test(error.message);
    this.#guest.cell.wasm.poison(describeHostError(error));
    if (this.#failure && this.#failure.kind !== "runtime") return;
    this.#failure = hostStack
      ? {
          kind: "stack",
          name: "RangeError",
          message: `the call stack overflowed (recursion too deep for the host's native stack before the ${effectiveStackKb(this.#req.limits.maxStackKb)} KiB guest limit fired); the engine was replaced`,
        }
      : crashed(
          `the QuickJS engine crashed under this code (${describeHostError(error)}); it was replaced and later runs are unaffected`,
        );
  }

  #crashedByOther(): undefined {
    this.#setFailure(
      crashed(
        `the shared QuickJS engine was replaced while this run was waiting (${this.#guest.cell.wasm.poisonReason || "another run crashed it"}); run the code again`,
      ),
    );
    return undefined;
  }

  /** Runs queued promise jobs; an exception out of a job (an uncatchable interrupt, OOM) ends the run. */
  #drain(): void {
    const rt = this.#guest.cell.rt;
    if (!rt.hasPendingJob()) return;
    const res = rt.executePendingJobs(-1);
    if (res.error) this.#failFromException(res.error, "job");
  }

  #waitForEvent(): Promise<void> {
    if (this.#deliveries.length > 0) return Promise.resolve();
    const now = performance.now();
    const until = this.#timers.nextDue(this.#deadlineAt());
    return new Promise<void>((resolve) => {
      const timer = setTimeout(
        () => {
          this.#wake = undefined;
          resolve();
        },
        Math.max(0, Math.ceil(until - now)),
      );
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }

  #fireEvents(): void {
    const ctx = this.#guest.ctx;
    for (const d of this.#deliveries.splice(0)) {
      this.#pendingHost.delete(d.deferred);
      if (!d.deferred.alive) continue;
      if (d.ok) {
        const handle = toGuest(this.#guest, d.value, this.#req.limits.maxResultBytes);
        d.deferred.resolve(handle);
        handle.dispose();
      } else {
        const err = d.value instanceof Error ? d.value : new Error(String(d.value));
        const handle = ctx.newError({ name: err.name, message: err.message });
        d.deferred.reject(handle);
        handle.dispose();
      }
      d.deferred.dispose();
      if (this.#failure) return;
    }
    this.#drain();
    this.#timers.fireDue(
      performance.now(),
      (fn, args) => {
        const r = ctx.callFunction(fn, ctx.undefined, ...args);
        if (r.error) this.#failFromException(r.error, "timer");
        else r.value.dispose();
        if (!this.#failure) this.#drain();
      },
      () => this.#failure !== undefined,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // values and errors

  #own(h: QuickJSHandle): QuickJSHandle {
    this.#handles.push(h);
    return h;
  }

  /** Copies the final value out: primitives directly, everything else through the service serialiser. */
  #readValue(h: QuickJSHandle): unknown {
    const read = readValue(this.#guest, h, this.#req.limits.maxResultBytes);
    if (read.ok) return read.value;
    if (read.exception) this.#failFromException(read.exception, "serialize");
    else this.#resultTooLarge();
    return undefined;
  }

  #resultTooLarge(): undefined {
    this.#setFailure(outputLimit("maxResultBytes", this.#req.limits.maxResultBytes));
    return undefined;
  }

  #setFailure(error: GuestError): void {
    this.#failure ??= error;
    this.#interruptKind ??= error.kind;
  }

  #interruptError(): GuestError {
    if (this.#failure) return this.#failure;
    const kind = this.#interruptKind ?? "timeout";
    if (kind === "memory") this.#peakBytes = this.#req.limits.memoryMb * MB;
    return interruptError(kind, this.#req.limits);
  }

  /** The host's module loader refused an import (the only way a run ends as `denied` here). */
  refuseImport(name: string): string {
    if (this.#refusedImports.length < 16) this.#refusedImports.push(name.slice(0, 256));
    return refusedImportMessage(name.slice(0, 256));
  }

  /** Reads an exception through the service realm and classifies it with what the host observed. */
  #failFromException(exc: QuickJSHandle, phase: Situation["phase"]): void {
    const { cell, internalErrorProto } = this.#guest;
    if (this.#interruptKind && !this.#failure) {
      // The run was being stopped (deadline, abort, a limit): whatever surfaced is a symptom of that.
      exc.dispose();
      this.#setFailure(this.#interruptError());
      return;
    }
    const limits = this.#req.limits;
    // Room to inspect: after an out-of-memory the exception may not be readable within the cap, and
    // after an interrupt the deadline has passed. Guest getters on the error run under this grace.
    cell.setLimits((limits.memoryMb + 16) * MB, undefined);
    // QuickJS throws null when it cannot allocate even the error. Whether the allocator is at the cap is
    // read now, before anything else allocates: the first allocation after an out-of-memory may collect
    // the garbage that filled the cap (reading the exception can compile the rest of the service realm).
    const allocatorNearCap = this.#guest.ctx.sameValue(exc, this.#guest.ctx.null) && this.#nearMemoryLimit();
    this.#graceUntil = performance.now() + INSPECT_GRACE_MS;
    let text: string | undefined;
    try {
      const r = cell.errorInfo(exc, internalErrorProto);
      if (r.error) r.error.dispose();
      else {
        text = cell.svc.typeof(r.value) === "string" ? cell.svc.getString(r.value) : undefined;
        r.value.dispose();
      }
    } finally {
      this.#graceUntil = undefined;
      exc.dispose();
      cell.setLimits(limits.memoryMb * MB, undefined);
    }
    if (this.#failure) return;
    const info = parseErrorInfo(text);
    const observed = {
      interrupt: this.#interruptKind,
      allocatorNearCap: info.isNull && allocatorNearCap,
      refusedImports: this.#refusedImports,
    };
    const error = classify(info, observed, { limits, filename: this.#src.filename, code: this.#src.code, phase });
    if (error.kind === "memory") this.#peakBytes = limits.memoryMb * MB;
    this.#setFailure(error);
  }

  #nearMemoryLimit(): boolean {
    try {
      return this.#guest.cell.memoryUsed() > this.#req.limits.memoryMb * MB * 0.8;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // host side of the installed globals (GuestRunHooks)

  /** Wraps a host callback: deliberate GuestThrows go to the guest; anything else is a host failure. */
  #callback<T>(body: () => T): T {
    try {
      return body();
    } catch (error) {
      if (error instanceof GuestThrow || error instanceof FsError || error instanceof TypeError) throw error;
      if (error instanceof FileLimitError) {
        this.#setFailure(error.verdict);
        throw new GuestThrow(error.message);
      }
      this.#onHostThrow(error);
      throw error;
    }
  }

  console(stream: "stdout" | "stderr", args: QuickJSHandle[], indent: string): void {
    this.#callback(() => {
      const { cell } = this.#guest;
      const inspector = runtimeInspector(this.#guest); // Blob/File: shown with size and type, as Node does
      const r = cell.format(inspector, args);
      inspector?.dispose();
      if (r.error) {
        // A guest getter or proxy threw while being formatted: rethrow it into the guest.
        throw new GuestThrow(
          `console: could not format a value: ${(cell.svc.dump(r.error) as { message?: string })?.message ?? "error"}`,
        );
      }
      const text = cell.svc.getString(r.value);
      r.value.dispose();
      this.#out.write(stream, indent ? `${indent}${text.replace(/\n/g, `\n${indent}`)}\n` : `${text}\n`);
    });
  }

  setTimer(args: QuickJSHandle[], repeat: boolean): QuickJSHandle {
    return this.#callback(() => {
      const { ctx } = this.#guest;
      const [fn, delayHandle, ...rest] = args;
      if (!fn || ctx.typeof(fn) !== "function") throw new TypeError(`The "callback" argument must be of type function`);
      try {
        return ctx.newNumber(this.#timers.add(ctx, fn, delayHandle, rest, repeat));
      } catch (error) {
        if (error instanceof TooManyTimers) throw new GuestThrow(error.message);
        throw error;
      }
    });
  }

  unrefTimer(id: number): void {
    this.#timers.unref(id);
  }

  clearTimer(idHandle: QuickJSHandle | undefined): void {
    this.#callback(() => {
      const { ctx } = this.#guest;
      if (!idHandle || ctx.typeof(idHandle) !== "number") return;
      this.#timers.clear(ctx.getNumber(idHandle));
    });
  }

  queueMicrotask(fn: QuickJSHandle | undefined): void {
    this.#callback(() => {
      const { ctx, promiseResolve, promiseCtor } = this.#guest;
      if (!fn || ctx.typeof(fn) !== "function") throw new TypeError(`The "callback" argument must be of type function`);
      if (!promiseResolve || !promiseCtor) throw new Error("wasmcell: Promise was not captured");
      const p = ctx.callFunction(promiseResolve, promiseCtor);
      if (p.error) throw new GuestThrow("queueMicrotask: could not schedule");
      const then = ctx.getProp(p.value, "then");
      const r = ctx.callFunction(then, p.value, fn);
      then.dispose();
      p.value.dispose();
      (r.error ?? r.value).dispose();
    });
  }

  fs(op: FsOp, args: QuickJSHandle[]): QuickJSHandle | undefined {
    return this.#callback(() => {
      this.#fs ??= new MemFs(this.#req.files, this.#req.limits.maxFiles, this.#req.limits.maxFileBytes);
      return fsCall(this.#guest, this.#fs, op, args);
    });
  }

  hostCall(name: string, args: QuickJSHandle[]): QuickJSHandle {
    return this.#callback(() => {
      const { ctx } = this.#guest;
      const fn: HostFunction | undefined = this.#req.hostFunctions[name];
      if (!fn) throw new GuestThrow(`${name} is not available in this run`);
      // The network bridge's calls are bounded by the network caps, not by maxHostCalls.
      if (!name.startsWith(INTERNAL_HOST_PREFIX) && this.#hostCalls++ >= this.#req.limits.maxHostCalls) {
        throw new GuestThrow(
          `too many host calls: this run may make ${this.#req.limits.maxHostCalls} (limits.maxHostCalls)`,
        );
      }
      const data = argumentsAsData(this.#guest, args, this.#req.limits.maxResultBytes);
      if (typeof data === "string") throw new GuestThrow(`${name}: ${data}`);
      this.#abortController ??= new AbortController();
      const deferred = ctx.newPromise();
      this.#pendingHost.add(deferred);
      let settled: Promise<unknown>;
      try {
        settled = Promise.resolve(fn(data, { signal: this.#abortController.signal }));
      } catch (error) {
        settled = Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      settled.then(
        (value) => this.#deliver({ deferred, ok: true, value }),
        (error: unknown) => this.#deliver({ deferred, ok: false, value: error }),
      );
      return deferred.handle;
    });
  }

  /**
   * One item from the display family: a malformed bundle is the guest's TypeError (nothing was shown);
   * an item past a display cap ends the run with that `output_limit`.
   */
  display(json: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch {
      throw new TypeError("display: the item is not JSON");
    }
    const parsed = parseDisplayItem(raw, this.#req.limits.maxDisplayItemBytes);
    if (!parsed.ok && parsed.error.kind !== "output_limit") throw new TypeError(`display: ${parsed.error.message}`);
    const failure = this.#display.add(raw);
    if (failure) {
      this.#setFailure(failure);
      throw new RangeError(failure.message);
    }
  }

  #deliver(d: Delivery): void {
    if (!this.#pendingHost.has(d.deferred)) return; // the run has ended
    this.#deliveries.push(d);
    this.#wake?.();
  }

  // ---------------------------------------------------------------------------------------------
  // the result

  #finish(value: unknown): RunResult {
    const { cell } = this.#guest;
    if (!this.#failure && this.#interruptKind) this.#setFailure(this.#interruptError());
    // Measuring costs ~30 µs (a memory walk); it is skipped for runs shorter than PEAK_MIN_RUN_MS.
    if (cell.wasm.alive && this.#peakBytes === 0 && performance.now() - this.#start >= PEAK_MIN_RUN_MS) {
      try {
        this.#peakBytes = Math.max(0, cell.memoryUsed() - cell.baselineBytes);
      } catch (error) {
        this.#onHostThrow(error);
      }
    }
    this.#abortController?.abort(new Error("the run has ended"));
    const base = {
      language: this.#req.language,
      stdout: this.#out.stdout,
      stderr: this.#out.stderr,
      outputTruncated: this.#out.truncated,
      files: this.#failure ? [] : (this.#fs?.outputs() ?? []),
      results: [...this.#display.items],
      stats: {
        engine: "quickjs" as const,
        wallMs: performance.now() - this.#start,
        outputBytes: this.#out.attempted,
        ...(this.#peakBytes > 0 ? { peakMemoryBytes: this.#peakBytes } : {}),
      },
    };
    if (this.#failure) return { ...base, ok: false, error: this.#failure };
    return { ...base, ok: true, value };
  }

  /** The kind the run ended with (undefined when it succeeded). */
  get failureKind(): ErrorKind | undefined {
    return this.#failure?.kind;
  }

  /** Frees every handle the run holds. Must happen before the context is freed (or QuickJS aborts). */
  release(): void {
    const { cell } = this.#guest;
    this.#guest.hooks = undefined;
    cell.run = undefined;
    cell.userCtx = undefined;
    for (const d of this.#pendingHost) if (d.alive) this.#safeDispose(() => d.dispose());
    this.#pendingHost.clear();
    for (const d of this.#deliveries) if (d.deferred.alive) this.#safeDispose(() => d.deferred.dispose());
    this.#deliveries.length = 0;
    this.#timers.release((fn) => this.#safeDispose(fn));
    for (const h of this.#handles) if (h.alive) this.#safeDispose(() => h.dispose());
    if (cell.wasm.alive) cell.strayHandles += this.#handles.filter((h) => h.alive).length;
    this.#handles.length = 0;
  }

  #safeDispose(fn: () => void): void {
    if (!this.#guest.cell.wasm.alive) return;
    try {
      fn();
    } catch (error) {
      this.#guest.cell.wasm.poison(describeHostError(error));
    }
  }
}
