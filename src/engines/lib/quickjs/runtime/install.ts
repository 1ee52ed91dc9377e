// Installs runtime families (table.ts) into a user context, before any user code runs.
//
// Each family's source is a user-realm function `(host, internals, global) => void`, evaluated in the
// user's own context, so every object it creates belongs to the user realm (`URL.constructor` is the
// user's Function, as with console.log). `host` is a plain object of user-realm functions created with
// newFunction; their bodies run in the host and take and return data only (strings, numbers, bytes
// copied into a fresh ArrayBuffer). `internals` is a user-realm object the families share (the
// DOMException class, the error factory the host uses to throw proper guest exceptions); it is only
// ever reachable through the families' closures, never through a global.

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { contextPointer } from "../internals.ts";
import { readGuestString } from "../strings.ts";
import { FAMILY_SOURCES, INTERNALS_SOURCE } from "./sources.ts";
import { asPlatformError, MAX_HASH_BYTES, MAX_LONG_TEXT, MAX_TEXT, Platform } from "./platform.ts";
import { familyEntry, type FamilyName } from "./table.ts";
import type { Binding, Out, Param, RuntimeTarget } from "./family.ts";

interface State {
  platform: Platform;
  installed: Set<FamilyName>;
  /** Families present only as stubs so far (lazy installation). */
  stubbed: Set<FamilyName>;
  internals: QuickJSHandle;
  makeError: QuickJSHandle;
}

const states = new WeakMap<RuntimeTarget, State>();

/** The `name` of every host binding (the security tests check that no guest path reaches one). */
export const HOST_FUNCTION_PREFIX = "wasmcell_host_";

/**
 * Makes `names` (in dependency order) available. Eagerly: each family's source is evaluated now (what
 * a program that names URL gets). Lazily: only stubs are defined — accessors on the global object and
 * placeholder methods — and a family's source is evaluated the first time one of its names is touched
 * (what code that reaches the global object reflectively gets, so that `this` or `globalThis` in a
 * program does not cost every family's parse; QuickJS parses ~1 ms per family).
 */
export function installRuntime(guest: RuntimeTarget, names: readonly FamilyName[], lazy = false): void {
  if (names.length === 0) return;
  const state = stateOf(guest);
  if (!lazy) return installNow(guest, state, names);
  const pending = names.filter((n) => !state.installed.has(n) && !state.stubbed.has(n));
  if (pending.length === 0) return;
  const ctx = guest.ctx;
  const plan = pending.map((n) => {
    const entry = familyEntry(n);
    return [n, entry.globals, entry.patches ?? []];
  });
  const stubs = evalValue(ctx, STUBS_SOURCE, "stubs");
  const load = guest.newHostFunction(`${HOST_FUNCTION_PREFIX}load`, "runtime.load");
  const planHandle = ctx.newString(JSON.stringify(plan));
  const r = ctx.callFunction(stubs, ctx.undefined, load, planHandle, ctx.global);
  planHandle.dispose();
  load.dispose();
  stubs.dispose();
  if (r.error) {
    const detail = JSON.stringify(ctx.dump(r.error));
    r.error.dispose();
    throw new Error(`wasmcell: the runtime stubs failed to install: ${detail}`);
  }
  r.value.dispose();
  for (const n of pending) state.stubbed.add(n);
}

/**
 * Moves the global functions `names` into `internals.net` and deletes them from the global object,
 * before any user code runs: the fetch family (a run with network) reaches its host bridge there,
 * through its closure only. Done once per context.
 */
export function stashNetBridge(guest: RuntimeTarget, names: readonly string[]): void {
  const state = stateOf(guest);
  const ctx = guest.ctx;
  const mover = evalValue(ctx, STASH_SOURCE, "net-bridge");
  const list = ctx.newString(JSON.stringify(names));
  const r = ctx.callFunction(mover, ctx.undefined, state.internals, ctx.global, list);
  list.dispose();
  mover.dispose();
  if (r.error) {
    r.error.dispose();
    throw new Error("wasmcell: the network bridge failed to install");
  }
  r.value.dispose();
}

const STASH_SOURCE = String.raw`(function (internals, global, namesJson) {
"use strict";
var net = {};
JSON.parse(namesJson).forEach(function (name) { net[name] = global[name]; delete global[name]; });
internals.net = net;
})`;

function withRequirements(name: FamilyName): FamilyName[] {
  const out: FamilyName[] = [];
  const add = (n: FamilyName): void => {
    if (out.includes(n)) return;
    for (const r of familyEntry(n).requires ?? []) add(r);
    out.push(n);
  };
  add(name);
  return out;
}

/** Accessors and placeholder methods that install their family on first touch, then step aside. */
const STUBS_SOURCE = String.raw`(function (load, planJson, global) {
"use strict";
var plan = JSON.parse(planJson), defineProperty = Object.defineProperty, apply = Reflect.apply;
function lookup(path) { var o = global; for (var i = 0; i < path.length; i++) { if (o == null) return undefined; o = o[path[i]]; } return o; }
plan.forEach(function (entry) {
  var family = entry[0];
  entry[1].forEach(function (name) {
    if (Object.prototype.hasOwnProperty.call(global, name)) return;
    defineProperty(global, name, { configurable: true, enumerable: false,
      get: function () { load(family); var d = Object.getOwnPropertyDescriptor(global, name); return d && "value" in d ? d.value : undefined; },
      set: function (v) { defineProperty(global, name, { value: v, writable: true, configurable: true }); } });
  });
  entry[2].forEach(function (dotted) {
    var path = dotted.split("."), name = path.pop(), target = lookup(path);
    if (target == null) return;
    // A method definition, not a function expression: a built-in method is not a constructor.
    var stub = { [name]() { load(family); return apply(target[name], this, arguments); } }[name];
    defineProperty(target, name, { value: stub, writable: true, enumerable: path[0] === "console", configurable: true });
  });
});
})`;

/**
 * The blob family's `internals.describeBlob` (a user-realm closure no guest path reaches), which the
 * service realm's formatter calls for an object whose constructor is named Blob or File; undefined
 * when the family was never installed (then no Blob exists). The caller disposes the handle.
 */
export function runtimeInspector(guest: RuntimeTarget): QuickJSHandle | undefined {
  const state = states.get(guest);
  return state?.installed.has("blob") ? guest.ctx.getProp(state.internals, "describeBlob") : undefined;
}

/** What the installer keeps of a context, as a snapshot records it (indices into `guest.kept`). */
export interface RuntimeRecord {
  installed: string[];
  stubbed: string[];
  internals: number;
  makeError: number;
}

/** The installer's state of `guest` (undefined: no family was ever installed). */
export function runtimeRecord(guest: RuntimeTarget, kept: readonly QuickJSHandle[]): RuntimeRecord | undefined {
  const state = states.get(guest);
  if (!state) return undefined;
  return {
    installed: [...state.installed],
    stubbed: [...state.stubbed],
    internals: kept.indexOf(state.internals),
    makeError: kept.indexOf(state.makeError),
  };
}

/** The family names a record may name. */
export const FAMILY_NAMES: ReadonlySet<string> = new Set(Object.keys(FAMILY_SOURCES));

/** Puts a restored context's installer state back (its handles are already among `kept`). */
export function restoreRuntime(guest: RuntimeTarget, record: RuntimeRecord, kept: readonly QuickJSHandle[]): void {
  const internals = kept[record.internals];
  const makeError = kept[record.makeError];
  if (!internals || !makeError || states.has(guest)) throw new Error("wasmcell: the runtime record does not fit");
  states.set(guest, {
    platform: newPlatform(guest),
    installed: new Set(record.installed as FamilyName[]),
    stubbed: new Set(record.stubbed as FamilyName[]),
    internals,
    makeError,
  });
}

function newPlatform(guest: RuntimeTarget): Platform {
  const platform = new Platform();
  platform.unrefTimer = (id) => void guest.hooks?.unrefTimer(id);
  platform.setIndent = (n) => void (guest.consoleIndent = " ".repeat(Math.max(0, Math.min(n, 64)) | 0));
  platform.display = (json) => void guest.hooks?.display(json);
  return platform;
}

function stateOf(guest: RuntimeTarget): State {
  let state = states.get(guest);
  if (!state) {
    const ctx = guest.ctx;
    const internals = evalValue(ctx, INTERNALS_SOURCE, "internals");
    const makeError = ctx.getProp(internals, "makeError");
    guest.keep(internals);
    guest.keep(makeError);
    const platform = newPlatform(guest);
    state = { platform, installed: new Set(), stubbed: new Set(), internals, makeError };
    states.set(guest, state);
  }
  return state;
}

function installNow(guest: RuntimeTarget, state: State, names: readonly FamilyName[]): void {
  const ctx = guest.ctx;
  for (const name of names) {
    if (state.installed.has(name)) continue;
    const family = FAMILY_SOURCES[name];
    const fn = evalValue(ctx, family.source, name);
    const host = ctx.newObject();
    for (const bindingName of Object.keys(family.bindings ?? {})) define(guest, host, name, bindingName);
    const r = ctx.callFunction(fn, ctx.undefined, host, state.internals, ctx.global);
    host.dispose();
    fn.dispose();
    if (r.error) {
      const detail = JSON.stringify(ctx.dump(r.error));
      r.error.dispose();
      throw new Error(`wasmcell: the ${name} runtime failed to install: ${detail}`);
    }
    r.value.dispose();
    state.installed.add(name);
    state.stubbed.delete(name);
  }
}

function evalValue(ctx: QuickJSContext, source: string, name: string): QuickJSHandle {
  const r = ctx.evalCode(source, `wasmcell:runtime/${name}`, 0);
  if (r.error) {
    const detail = JSON.stringify(ctx.dump(r.error));
    r.error.dispose();
    throw new Error(`wasmcell: the ${name} runtime did not compile: ${detail}`);
  }
  return r.value;
}

function define(guest: RuntimeTarget, target: QuickJSHandle, family: FamilyName, name: string): void {
  const handle = guest.newHostFunction(`${HOST_FUNCTION_PREFIX}${name}`, `runtime.${family}.${name}`);
  guest.ctx.setProp(target, name, handle);
  handle.dispose();
}

/**
 * The body of the runtime's host function `key` ("load", or "<family>.<binding>") for `guest`, or
 * undefined for a key no family has: what `define` and the lazy loader install, and what a restored
 * session gets back for the same key.
 */
export function runtimeHostFunction(guest: RuntimeTarget, key: string): HostBody | undefined {
  const state = stateOf(guest);
  const ctx = guest.ctx;
  if (key === "load")
    return (nameHandle) => {
      const name =
        nameHandle && ctx.typeof(nameHandle) === "string" ? (ctx.getString(nameHandle) as FamilyName) : undefined;
      if (!name || !state.stubbed.has(name)) return undefined;
      installNow(guest, state, withRequirements(name));
      return undefined;
    };
  const dot = key.indexOf(".");
  const family = key.slice(0, dot);
  const name = key.slice(dot + 1);
  if (dot < 0 || !Object.hasOwn(FAMILY_SOURCES, family)) return undefined;
  const bindings = FAMILY_SOURCES[family as FamilyName].bindings ?? {};
  if (!Object.hasOwn(bindings, name)) return undefined;
  return bindingBody(guest, name, bindings[name]!, state);
}

type HostBody = (...args: QuickJSHandle[]) => QuickJSHandle | undefined;

function bindingBody(guest: RuntimeTarget, name: string, binding: Binding, state: State): HostBody {
  const ctx = guest.ctx;
  const ffi = guest.cell.wasm.quickjs.getFFI() as unknown as Ffi;
  return (...args) => {
    try {
      state.platform.count();
      const values = binding.params.map((kind, i) => read(guest, ffi, args[i], kind, name));
      return write(ctx, (binding.fn as (p: Platform, ...a: unknown[]) => Out)(state.platform, ...values));
    } catch (error) {
      // A proper guest exception (TypeError, RangeError, DOMException …) made by the guest's factory:
      // quickjs-emscripten throws a returned handle as is.
      const e = asPlatformError(error);
      const nameH = ctx.newString(e.name);
      const msgH = ctx.newString(e.message);
      const made = ctx.callFunction(state.makeError, ctx.undefined, nameH, msgH);
      nameH.dispose();
      msgH.dispose();
      // A thrown QuickJS handle is how quickjs-emscripten raises a guest value from a host function.
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      if (made.error) throw made.error;
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw made.value;
    }
  };
}

type Ffi = { QTS_GetArrayBufferLength(ctx: never, value: unknown): number };

function read(guest: RuntimeTarget, ffi: Ffi, h: QuickJSHandle | undefined, kind: Param, fn: string): unknown {
  const ctx = guest.ctx;
  const type = h ? ctx.typeof(h) : "undefined";
  switch (kind) {
    case "optString":
    case "string": {
      if (kind === "optString" && type === "undefined") return undefined;
      if (type !== "string" || !h) throw new TypeError(`${fn}: expected a string`);
      const s = readGuestString(ctx, guest.cell, h, 4 * MAX_TEXT);
      if (s.length > MAX_TEXT) throw new TypeError(`${fn}: a string argument is longer than ${MAX_TEXT} characters`);
      return s;
    }
    case "longString": {
      if (type !== "string" || !h) throw new TypeError(`${fn}: expected a string`);
      const s = readGuestString(ctx, guest.cell, h, 4 * MAX_LONG_TEXT);
      if (s.length > MAX_LONG_TEXT)
        throw new TypeError(`${fn}: a string argument is longer than ${MAX_LONG_TEXT} characters`);
      return s;
    }
    case "number":
      if (type !== "number" || !h) throw new TypeError(`${fn}: expected a number`);
      return ctx.getNumber(h);
    case "bytes": {
      // The guest side always passes a fresh ArrayBuffer it owns; anything else is refused.
      if (type !== "object" || !h) throw new TypeError(`${fn}: expected an ArrayBuffer`);
      const len = ffi.QTS_GetArrayBufferLength(contextPointer(ctx) as never, h.value);
      if (len > MAX_HASH_BYTES) throw new TypeError(`${fn}: more than ${MAX_HASH_BYTES} bytes`);
      if (len === 0) return new Uint8Array(0);
      const view = ctx.getArrayBuffer(h);
      const copy = view.value.slice();
      view.dispose();
      return copy;
    }
  }
}

function write(ctx: QuickJSContext, out: Out): QuickJSHandle | undefined {
  if (out === undefined) return undefined;
  if (typeof out === "string") return ctx.newString(out);
  if (typeof out === "number") return ctx.newNumber(out);
  return ctx.newArrayBuffer(out.slice().buffer);
}
