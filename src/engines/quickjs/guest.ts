// A user context and the host globals installed into it: console, timers, queueMicrotask, the
// in-memory fs, and the caller's host functions. Every function here is a *user-realm* function
// (created with newFunction in the user's context), so `console.log.constructor` is the user's own
// Function — nothing of the service realm or the host leaks through them. Their bodies run in the host
// and touch guest values only through handles: strings and numbers are copied out, objects are
// serialised by the service realm first.

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { Cell } from "./cell.ts";
import type { FsOp, GuestRunHooks } from "./hooks.ts";
import type { GlobalNeeds } from "./source.ts";
import { installRuntime } from "./runtime/install.ts";

export type { FsOp, GuestRunHooks } from "./hooks.ts";

const FS_OPS: FsOp[] = [
  "readFileSync",
  "writeFileSync",
  "appendFileSync",
  "existsSync",
  "readdirSync",
  "unlinkSync",
  "mkdirSync",
];

const CONSOLE: [string, "stdout" | "stderr"][] = [
  ["log", "stdout"],
  ["info", "stdout"],
  ["debug", "stdout"],
  ["dir", "stdout"],
  ["warn", "stderr"],
  ["error", "stderr"],
  ["trace", "stderr"],
];

export class Guest {
  readonly cell: Cell;
  readonly ctx: QuickJSContext;
  /** The run the globals currently answer to (a session has many runs, one at a time). */
  hooks: GuestRunHooks | undefined;
  readonly installed = { console: false, timers: false, fs: false };
  /** console.group's current indentation (the runtime's console family sets it). */
  consoleIndent = "";
  readonly hostNames = new Set<string>();
  /** User-realm intrinsics captured before any user code ran (used to build values in the user realm). */
  jsonParse: QuickJSHandle | undefined;
  promiseResolve: QuickJSHandle | undefined;
  promiseCtor: QuickJSHandle | undefined;
  toUint8Array: QuickJSHandle | undefined;
  readonly #owned: QuickJSHandle[] = [];

  constructor(cell: Cell, ctx: QuickJSContext) {
    this.cell = cell;
    this.ctx = ctx;
    // FinalizationRegistry callbacks are queued by garbage collection, which any later run's allocations
    // trigger: a registry left by this run would call back into this context during someone else's run.
    // Without the constructor no registry can be made (there is no other way to reach one).
    ctx.setProp(ctx.global, "FinalizationRegistry", ctx.undefined);
    // The host's "memory" and "stack" verdicts accept only errors shaped like the ones QuickJS raises
    // itself, with this realm's own InternalError.prototype: the constructor is removed, so user code
    // cannot make such an error (it can only catch a genuine one, which it can then rethrow as is).
    this.internalErrorProto = this.#capture(["InternalError", "prototype"]);
    ctx.setProp(ctx.global, "InternalError", ctx.undefined);
  }

  /** The user realm's InternalError.prototype, captured before user code ran. */
  readonly internalErrorProto: QuickJSHandle;

  #hooks(): GuestRunHooks {
    if (!this.hooks) throw new Error("wasmcell: no run is active in this context");
    return this.hooks;
  }

  #define(target: QuickJSHandle, name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined): void {
    const handle = this.ctx.newFunction(name, fn);
    this.ctx.setProp(target, name, handle);
    handle.dispose();
  }

  #capture(path: string[]): QuickJSHandle {
    let handle = this.ctx.getProp(this.ctx.global, path[0] ?? "");
    for (const key of path.slice(1)) {
      const next = this.ctx.getProp(handle, key);
      handle.dispose();
      handle = next;
    }
    this.#owned.push(handle);
    return handle;
  }

  /**
   * Puts `console` on the global object as WebIDL defines a namespace: a writable, configurable,
   * non-enumerable property whose value has `Symbol.toStringTag` "console" and, as its [[Prototype]],
   * an empty object whose own is Object.prototype. The handle API can define neither a writable
   * non-enumerable property nor a prototype, so a user-realm helper does it, evaluated now: in a fresh
   * context before any user code; in a session's later run it uses that realm's (possibly replaced)
   * intrinsics, which reach nothing the guest could not already reach with the same two objects.
   */
  #asNamespace(consoleObj: QuickJSHandle): void {
    const ctx = this.ctx;
    const helper = ctx.evalCode(
      `(function (g, c) {
        "use strict";
        Object.setPrototypeOf(c, {});
        Object.defineProperty(c, Symbol.toStringTag, { value: "console", configurable: true });
        Object.defineProperty(g, "console", { value: c, writable: true, configurable: true });
      })`,
      "wasmcell:console",
      0,
    );
    if (helper.error) {
      helper.error.dispose();
      throw new Error("wasmcell: could not create the console helper");
    }
    const r = ctx.callFunction(helper.value, ctx.undefined, ctx.global, consoleObj);
    helper.value.dispose();
    // A session whose earlier run made `console` a non-configurable global keeps its own value.
    if (r.error) r.error.dispose();
    else r.value.dispose();
  }

  /** Installs what `needs` asks for and is not there yet. Must run before user code (captures intrinsics). */
  install(needs: GlobalNeeds, hostNames: readonly string[]): void {
    const ctx = this.ctx;
    if (needs.console && !this.installed.console) {
      const consoleObj = ctx.newObject();
      for (const [name, stream] of CONSOLE)
        this.#define(
          consoleObj,
          name,
          (...args) => (this.#hooks().console(stream, args, this.consoleIndent), undefined),
        );
      this.#asNamespace(consoleObj);
      consoleObj.dispose();
      this.installed.console = true;
    }
    if (needs.timers && !this.installed.timers) {
      this.promiseCtor = this.#capture(["Promise"]);
      this.promiseResolve = this.#capture(["Promise", "resolve"]);
      this.#define(ctx.global, "setTimeout", (...args) => this.#hooks().setTimer(args, false));
      this.#define(ctx.global, "setInterval", (...args) => this.#hooks().setTimer(args, true));
      this.#define(ctx.global, "clearTimeout", (id) => (this.#hooks().clearTimer(id), undefined));
      this.#define(ctx.global, "clearInterval", (id) => (this.#hooks().clearTimer(id), undefined));
      this.#define(ctx.global, "queueMicrotask", (fn) => (this.#hooks().queueMicrotask(fn), undefined));
      this.installed.timers = true;
    }
    if (needs.fs && !this.installed.fs) {
      const fsObj = ctx.newObject();
      for (const op of FS_OPS) this.#define(fsObj, op, (...args) => this.#hooks().fs(op, args));
      ctx.setProp(ctx.global, "fs", fsObj);
      fsObj.dispose();
      // `new` has no handle API; a one-line user-realm helper builds Uint8Arrays for readFileSync.
      const helper = ctx.evalCode("(function (b) { return new Uint8Array(b); })", "wasmcell:fs", 0);
      if (helper.error) {
        helper.error.dispose();
        throw new Error("wasmcell: could not create the fs helper");
      }
      this.toUint8Array = helper.value;
      this.#owned.push(helper.value);
      this.installed.fs = true;
    }
    if (needs.hostFunctions) {
      for (const name of hostNames) {
        if (this.hostNames.has(name)) continue;
        this.jsonParse ??= this.#capture(["JSON", "parse"]);
        this.#define(ctx.global, name, (...args) => this.#hooks().hostCall(name, args));
        this.hostNames.add(name);
      }
    }
    installRuntime(this, needs.runtime, needs.runtimeLazy);
  }

  /** Keeps a handle alive until the context is freed (the runtime's shared objects). */
  keep(handle: QuickJSHandle): void {
    this.#owned.push(handle);
  }

  /** Frees the captured handles and the context. Throws if the module aborts (the caller poisons it). */
  dispose(): void {
    for (const h of this.#owned) if (h.alive) h.dispose();
    this.#owned.length = 0;
    this.ctx.dispose();
  }
}
