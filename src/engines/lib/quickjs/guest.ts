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
import { installRuntime, runtimeHostFunction } from "./runtime/install.ts";

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

/** A host function's body as quickjs-emscripten calls it. */
export type HostFunctionBody = (...args: QuickJSHandle[]) => QuickJSHandle | undefined;

const TIMERS = ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "queueMicrotask"] as const;

/** The longest host-function key a snapshot may name (the caller's host function names included). */
export const MAX_KEY = 300;

/** What a Guest is besides its context, as a snapshot records it (snapshot.ts bounds every field). */
export interface GuestRecord {
  installed: { console: boolean; timers: boolean; fs: boolean };
  consoleIndent: string;
  hostNames: string[];
  /** JSValue* of the captured intrinsics, 0 where not captured. */
  internalErrorProto: number;
  jsonParse: number;
  promiseResolve: number;
  promiseCtor: number;
  toUint8Array: number;
  /** JSValue* of every other handle kept for the context's life (the runtime families'). */
  kept: number[];
}

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

  /** Which host-function key each body this guest created answers to (snapshot.ts records them by id). */
  readonly keys = new WeakMap<object, string>();

  constructor(
    cell: Cell,
    ctx: QuickJSContext,
    restored?: { record: GuestRecord; handle: (p: number) => QuickJSHandle },
  ) {
    this.cell = cell;
    this.ctx = ctx;
    if (restored) {
      const { record, handle } = restored;
      const own = (p: number): QuickJSHandle | undefined => (p === 0 ? undefined : this.#own(handle(p)));
      this.internalErrorProto = this.#own(handle(record.internalErrorProto));
      this.jsonParse = own(record.jsonParse);
      this.promiseResolve = own(record.promiseResolve);
      this.promiseCtor = own(record.promiseCtor);
      this.toUint8Array = own(record.toUint8Array);
      for (const p of record.kept) this.keep(handle(p));
      Object.assign(this.installed, record.installed);
      this.consoleIndent = record.consoleIndent;
      for (const n of record.hostNames) this.hostNames.add(n);
      return;
    }
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

  #own(h: QuickJSHandle): QuickJSHandle {
    this.#owned.push(h);
    return h;
  }

  /** The handles kept for the context's life beyond the named intrinsics (the runtime families'). */
  get kept(): readonly QuickJSHandle[] {
    const named = new Set([
      this.internalErrorProto,
      this.jsonParse,
      this.promiseResolve,
      this.promiseCtor,
      this.toUint8Array,
    ]);
    return this.#owned.filter((h) => !named.has(h));
  }

  /**
   * The body of the host function `key` names, bound to this guest, or undefined for a key the install
   * code never makes. The one table both installing and restoring use: a restored C function object
   * gets back exactly the body the install code gave it.
   */
  hostBody(key: string): HostFunctionBody | undefined {
    const dot = key.indexOf(".");
    const family = key.slice(0, dot);
    const name = key.slice(dot + 1);
    if (dot < 0 || key.length > MAX_KEY) return undefined;
    switch (family) {
      case "console": {
        const stream = CONSOLE.find(([n]) => n === name)?.[1];
        return stream && ((...args) => (this.#hooks().console(stream, args, this.consoleIndent), undefined));
      }
      case "timer":
        switch (name as (typeof TIMERS)[number]) {
          case "setTimeout":
            return (...args) => this.#hooks().setTimer(args, false);
          case "setInterval":
            return (...args) => this.#hooks().setTimer(args, true);
          case "clearTimeout":
          case "clearInterval":
            return (id) => (this.#hooks().clearTimer(id), undefined);
          case "queueMicrotask":
            return (fn) => (this.#hooks().queueMicrotask(fn), undefined);
        }
        return undefined;
      case "fs":
        return FS_OPS.includes(name as FsOp) ? (...args) => this.#hooks().fs(name as FsOp, args) : undefined;
      case "host":
        return name.length > 0 ? (...args) => this.#hooks().hostCall(name, args) : undefined;
      case "runtime":
        return runtimeHostFunction(this, name);
    }
    return undefined;
  }

  /** A user-realm function whose body is the host function `key` (see hostBody). */
  newHostFunction(name: string, key: string): QuickJSHandle {
    const body = this.hostBody(key);
    if (!body) throw new Error(`wasmcell: no host function ${key}`);
    this.keys.set(body, key);
    return this.ctx.newFunction(name, body);
  }

  /** The user realm's InternalError.prototype, captured before user code ran. */
  readonly internalErrorProto: QuickJSHandle;

  #hooks(): GuestRunHooks {
    if (!this.hooks) throw new Error("wasmcell: no run is active in this context");
    return this.hooks;
  }

  #define(target: QuickJSHandle, name: string, key: string): void {
    const handle = this.newHostFunction(name, key);
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
      for (const [name] of CONSOLE) this.#define(consoleObj, name, `console.${name}`);
      this.#asNamespace(consoleObj);
      consoleObj.dispose();
      this.installed.console = true;
    }
    if (needs.timers && !this.installed.timers) {
      this.promiseCtor = this.#capture(["Promise"]);
      this.promiseResolve = this.#capture(["Promise", "resolve"]);
      for (const name of TIMERS) this.#define(ctx.global, name, `timer.${name}`);
      this.installed.timers = true;
    }
    if (needs.fs && !this.installed.fs) {
      const fsObj = ctx.newObject();
      for (const op of FS_OPS) this.#define(fsObj, op, `fs.${op}`);
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
        this.#define(ctx.global, name, `host.${name}`);
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
