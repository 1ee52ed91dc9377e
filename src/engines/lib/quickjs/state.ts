// A JavaScript session's whole state, taken out of its WebAssembly module and put back into another.
//
// A session runs in a module instance of its own (session-modules.ts), so its QuickJS state is that
// instance's linear memory plus what lives outside it, inventoried here:
//
// | state                                  | where it lives                      | snapshot / resume                   |
// |----------------------------------------|-------------------------------------|-------------------------------------|
// | every JSRuntime/JSContext/JSValue, the | linear memory                       | copied whole; written back whole    |
// | malloc heap, atoms, the job queue      |                                     | (zero pages encoded as absent)      |
// | the stack pointer (the one mutable     | a wasm global (not exported)        | at its base between calls: a        |
// | global the build has)                  |                                     | snapshot is taken only between runs |
// | runtime / context / handle wrappers    | quickjs-emscripten objects          | pointers recorded; wrappers rebuilt |
// | host functions (console, timers, fs,   | the runtime's HostRefMap (id → body)| id → key recorded; each body comes  |
// | host calls, the runtime families')     |                                     | from Guest.hostBody(key), the table |
// |                                        |                                     | the install code itself uses        |
// | installed globals, captured intrinsics | Guest, runtime/install.ts           | recorded (flags, names, pointers)   |
// | timers, host calls, files, output      | per Run, freed when a run ends      | nothing to take: none outlive a run |
// | interrupt / poll state                 | Cell, per run                       | re-armed by every run               |
// | memory / stack limits                  | JSRuntime (in memory)               | set again by every run              |
//
// Everything read back is bounded before it touches an engine (checkInventory); a restored state is
// proven (prove) before the session's first run, and a module that fails either is poisoned and
// dropped, so nothing half-restored remains. What the restore relies on in quickjs-emscripten (its
// runtime constructor, the HostRefMap's fields) is in internals.ts, with the test that pins it.

import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../core/errors.ts";
import { Cell } from "./cell.ts";
import { Guest, MAX_KEY, type GuestRecord } from "./guest.ts";
import {
  adoptValue,
  contextPointer,
  growMemory,
  readHostRefs,
  runtimePointer,
  trackedContexts,
  wrapContext,
  wrapRuntime,
  writeHostRefs,
} from "./internals.ts";
import type { WasmModule } from "./modules.ts";
import { FAMILY_NAMES, restoreRuntime, runtimeRecord, type RuntimeRecord } from "./runtime/install.ts";

export const INVENTORY_FORMAT = 1;
/** WebAssembly pages: a restored memory is a whole number of them. */
export const WASM_PAGE = 65_536;
/** The most host functions, kept handles and free host-reference ids a snapshot may list. */
const MAX_ENTRIES = 4096;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** What a session is outside its linear memory (pointers are byte offsets into it). */
export interface Inventory {
  format: number;
  memoryBytes: number;
  rt: number;
  svc: number;
  ctx: number;
  serialize: number;
  format_: number;
  errorInfo: number;
  baselineBytes: number;
  guest: GuestRecord;
  runtime: RuntimeRecord | undefined;
  /** [host reference id, key] of every live host function. */
  hostRefs: [number, string][];
  nextId: number;
  freelist: number[];
}

const refuse = (why: string): never => {
  throw new SnapshotUnsupportedError("state", `this session cannot be snapshotted: ${why}`);
};

/**
 * The session's inventory and a live view of its linear memory (read it before anything else runs in
 * the module). Only between runs: no call into the module is on the stack then, so its stack pointer
 * is at its base.
 */
export function captureSession(guest: Guest): { inventory: Inventory; memory: Uint8Array } {
  const cell = guest.cell;
  const wasm = cell.wasm as WasmModule;
  if (!wasm.alive || cell.dead) refuse("its engine crashed in an earlier run");
  if (cell.run || cell.userCtx) refuse("a run is in progress");
  cell.settle();
  cell.dropCaches();
  if (trackedContexts(cell.rt) !== 2) refuse("its runtime holds a context other than its own and the service realm");
  const { refs, nextId, freelist } = readHostRefs(cell.rt);
  const hostRefs: [number, string][] = [];
  for (const [id, body] of refs) {
    const key = guest.keys.get(body);
    if (key === undefined) refuse("it holds a host function the snapshot cannot rebuild");
    hostRefs.push([id, key!]);
  }
  const kept = guest.kept;
  const service = cell.serviceEntries();
  const ptr = (h: { value: unknown } | undefined): number => (h === undefined ? 0 : (h.value as number));
  const memory = new Uint8Array(wasm.memory.buffer);
  return {
    memory,
    inventory: {
      format: INVENTORY_FORMAT,
      memoryBytes: memory.length,
      rt: runtimePointer(cell.rt),
      svc: contextPointer(cell.svc),
      ctx: contextPointer(guest.ctx),
      serialize: ptr(service.serialize),
      format_: ptr(service.format),
      errorInfo: ptr(service.errorInfo),
      baselineBytes: cell.baselineBytes,
      guest: {
        installed: { ...guest.installed },
        consoleIndent: guest.consoleIndent,
        hostNames: [...guest.hostNames],
        internalErrorProto: ptr(guest.internalErrorProto),
        jsonParse: ptr(guest.jsonParse),
        promiseResolve: ptr(guest.promiseResolve),
        promiseCtor: ptr(guest.promiseCtor),
        toUint8Array: ptr(guest.toUint8Array),
        kept: kept.map(ptr),
      },
      runtime: runtimeRecord(guest, kept),
      hostRefs,
      nextId,
      freelist,
    },
  };
}

// --- Reading an inventory back: every field bounded --------------------------------------------------

const corrupt = (what: string): never => {
  throw new SnapshotRejectedError("corrupt", `its engine state: ${what}`);
};

function int(v: unknown, min: number, max: number, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) corrupt(what);
  return v as number;
}

function list(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v) || v.length > MAX_ENTRIES) corrupt(what);
  return v as unknown[];
}

function text(v: unknown, max: number, what: string): string {
  if (typeof v !== "string" || v.length > max) corrupt(what);
  return v as string;
}

/**
 * The inventory a snapshot carries, checked field by field against `maxMemoryBytes`: its memory a whole
 * number of wasm pages within the cap, every pointer inside that memory and aligned as malloc aligns,
 * host references valid ids with keys the install code makes, family names real.
 */
export function checkInventory(raw: unknown, maxMemoryBytes: number): Inventory {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return corrupt("no inventory");
  const r = raw as Record<string, unknown>;
  if (r.format !== INVENTORY_FORMAT) corrupt(`inventory format ${String(r.format)}`);
  const memoryBytes = int(r.memoryBytes, WASM_PAGE, maxMemoryBytes, "its memory size (over the cap, or none)");
  if (memoryBytes % WASM_PAGE !== 0) corrupt("its memory size is not a whole number of pages");
  // malloc aligns to 8; a JSValue* or JSContext* anywhere else is not one.
  const at = (v: unknown, what: string, optional = false): number => {
    if (optional && v === 0) return 0;
    const p = int(v, 8, memoryBytes - 16, `${what} points outside its memory`);
    if (p % 8 !== 0) corrupt(`${what} is not an allocation`);
    return p;
  };
  const g = r.guest as Record<string, unknown> | null;
  if (typeof g !== "object" || g === null) return corrupt("no guest record");
  const installed = g.installed as Record<string, unknown> | null;
  if (typeof installed !== "object" || installed === null) return corrupt("installed globals");
  const flag = (v: unknown): boolean => (typeof v === "boolean" ? v : corrupt("installed globals"));
  const guest: GuestRecord = {
    installed: { console: flag(installed.console), timers: flag(installed.timers), fs: flag(installed.fs) },
    consoleIndent: text(g.consoleIndent, 64, "console indent"),
    hostNames: list(g.hostNames, "host names").map((n) => text(n, MAX_KEY, "a host name")),
    internalErrorProto: at(g.internalErrorProto, "InternalError.prototype"),
    jsonParse: at(g.jsonParse, "JSON.parse", true),
    promiseResolve: at(g.promiseResolve, "Promise.resolve", true),
    promiseCtor: at(g.promiseCtor, "Promise", true),
    toUint8Array: at(g.toUint8Array, "the fs helper", true),
    kept: list(g.kept, "kept handles").map((p) => at(p, "a kept handle")),
  };
  let runtime: RuntimeRecord | undefined;
  if (r.runtime !== undefined) {
    const rr = r.runtime as Record<string, unknown> | null;
    if (typeof rr !== "object" || rr === null) return corrupt("runtime record");
    const families = (v: unknown) =>
      list(v, "families").map((n) => (FAMILY_NAMES.has(n as string) ? (n as string) : corrupt("an unknown family")));
    runtime = {
      installed: families(rr.installed),
      stubbed: families(rr.stubbed),
      internals: int(rr.internals, 0, guest.kept.length - 1, "the runtime internals"),
      makeError: int(rr.makeError, 0, guest.kept.length - 1, "the runtime error factory"),
    };
  }
  const ids = new Set<number>();
  const hostRefs = list(r.hostRefs, "host functions").map((e): [number, string] => {
    if (!Array.isArray(e) || e.length !== 2) return corrupt("a host function entry");
    const id = int(e[0], INT32_MIN, INT32_MAX, "a host function id");
    if (id === 0 || ids.has(id)) corrupt("a host function id (zero or repeated)");
    ids.add(id);
    return [id, text(e[1], MAX_KEY, "a host function key")];
  });
  const nextId = int(r.nextId, INT32_MIN, INT32_MAX + 1, "the next host id");
  const freelist = list(r.freelist, "free host ids").map((v) => {
    const id = int(v, INT32_MIN, INT32_MAX, "a free host id");
    if (id >= nextId || ids.has(id)) corrupt("a free host id in use or never given");
    return id;
  });
  for (const id of ids) if (id >= nextId) corrupt("a host function id never given");
  return {
    format: INVENTORY_FORMAT,
    memoryBytes,
    rt: at(r.rt, "the runtime"),
    svc: at(r.svc, "the service realm"),
    ctx: at(r.ctx, "the context"),
    serialize: at(r.serialize, "the serialiser"),
    format_: at(r.format_, "the formatter"),
    errorInfo: at(r.errorInfo, "the error reader"),
    baselineBytes: int(r.baselineBytes, 0, memoryBytes, "the baseline"),
    guest,
    runtime,
    hostRefs,
    nextId,
    freelist,
  };
}

// --- Putting a state back ------------------------------------------------------------------------------

/**
 * The session `inventory` describes, restored into `module` (a pristine instance of the same build):
 * its memory grown to size and handed to `write` (which puts every byte back; `dirtyPages`, when
 * known, are the only pages of the pristine memory that are not zero), the wrappers rebuilt,
 * the host functions put back at their ids, then proven. On any failure the module is poisoned (it is
 * never used again) and a SnapshotRejectedError says why.
 */
export function restoreSession(
  module: WasmModule,
  inventory: Inventory,
  write: (memory: Uint8Array, dirtyPages: readonly number[] | undefined) => void,
): Guest {
  try {
    const before = module.memory.buffer.byteLength;
    growMemory(module.quickjs, module.memory, inventory.memoryBytes);
    // Growing ran malloc in it: which pages it touched is no longer known.
    const dirty = module.memory.buffer.byteLength === before ? module.dirtyPages : undefined;
    write(new Uint8Array(module.memory.buffer), dirty);
    const rt = wrapRuntime(module.quickjs, inventory.rt);
    const svc = wrapContext(rt, inventory.svc);
    const ctx = wrapContext(rt, inventory.ctx);
    const cell = new Cell(module, {
      rt,
      svc,
      serialize: adoptValue(svc, inventory.serialize),
      format: adoptValue(svc, inventory.format_),
      errorInfo: adoptValue(svc, inventory.errorInfo),
      baselineBytes: inventory.baselineBytes,
    });
    module.cells.add(cell);
    cell.inUse = true;
    const guest = new Guest(cell, ctx, { record: inventory.guest, handle: (p) => adoptValue(ctx, p) });
    if (inventory.runtime) restoreRuntime(guest, inventory.runtime, guest.kept);
    const refs = new Map<number, object>();
    for (const [id, key] of inventory.hostRefs) {
      const body = guest.hostBody(key);
      if (!body)
        throw new SnapshotRejectedError("corrupt", `its engine state names a host function no install makes (${key})`);
      guest.keys.set(body, key);
      refs.set(id, body);
    }
    writeHostRefs(rt, refs, inventory.nextId, inventory.freelist);
    prove(cell, guest);
    // A resume is a copy: without a new seed, every resume and fork of one snapshot would draw the
    // same Math.random sequence as the others and as the original.
    module.seedRandom(ctx);
    return guest;
  } catch (error) {
    module.poison(`a session could not be restored into it: ${String(error)}`);
    if (error instanceof SnapshotRejectedError) throw error;
    throw new SnapshotRejectedError("corrupt", `its engine state did not restore: ${(error as Error).message}`);
  }
}

/**
 * Proves a restored state before any guest code runs in it, the way a reused cell is proven (Cell's
 * inventory): no run attached, exactly its two contexts, the service realm's entry points alive and
 * answering a fixed probe exactly as a fresh one does, the runtime's object graph walkable (computing
 * its memory use visits every object, shape and atom), and the user context evaluating a literal.
 */
function prove(cell: Cell, guest: Guest): void {
  if (cell.run || cell.userCtx || cell.pendingCleanup || cell.strayHandles > 0) throw new Error("a run is attached");
  if (trackedContexts(cell.rt) !== 2) throw new Error("the restored runtime does not hold exactly its two contexts");
  const service = cell.serviceEntries();
  if (!service.serialize.alive || !service.format.alive || !service.errorInfo.alive)
    throw new Error("the service realm is gone");
  const svc = cell.svc;
  const probe = svc.newObject();
  const list = svc.newArray();
  try {
    svc.newNumber(1).consume((h) => svc.setProp(probe, "a", h));
    svc.setProp(list, 0, svc.true);
    svc.setProp(list, 1, svc.null);
    svc.setProp(probe, "b", list);
    const r = svc.callFunction(service.serialize, svc.undefined, probe, cell.numberHandle(1000));
    const out = r.error ? undefined : svc.getString(r.value);
    (r.error ?? r.value).dispose();
    if (out !== '={"a":1,"b":[true,null]}') throw new Error("the service realm does not answer its probe");
    const u = svc.callFunction(service.serialize, svc.undefined, svc.undefined, cell.numberHandle(1000));
    const uOut = u.error ? undefined : svc.getString(u.value);
    (u.error ?? u.value).dispose();
    if (uOut !== '["u"]') throw new Error("the service realm does not answer its probe");
  } finally {
    list.dispose();
    probe.dispose();
  }
  if (!(cell.memoryUsed() > 0)) throw new Error("the runtime's memory use cannot be computed");
  const two = guest.ctx.evalCode("1 + 1", "wasmcell:probe", 0);
  const n = two.error ? undefined : guest.ctx.getNumber(two.value);
  (two.error ?? two.value).dispose();
  if (n !== 2) throw new Error("the user context does not evaluate");
  if (guest.ctx.typeof(guest.internalErrorProto) !== "object") throw new Error("its captured intrinsics are gone");
}
