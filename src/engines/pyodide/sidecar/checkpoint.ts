// The sidecar's checkpoint: what a stateless run starts from, how the interpreter is put back to it,
// and the proof that it was. Part of the sidecar process (it imports nothing but its own folder).
//
// The rule: rebuild from the record, then prove. The checkpoint records every piece of mutable state
// the guest can reach (the table below); after a run each piece is *rebuilt* from that record — not
// "undo what the run is known to have done" — and then a fingerprint of all of it is taken again and
// must equal the checkpoint's, field for field, or the sidecar retires (the host replaces it).
//
// | state                          | where it lives                         | reset                            | proven by                        |
// |--------------------------------|----------------------------------------|----------------------------------|----------------------------------|
// | Python objects, heap, malloc   | WASM linear memory                     | differing blocks copied back;    | every block compared (the copy   |
// |                                |                                        |  grown tail zeroed               |  is the last write; see below)   |
// | C stack pointer                | WASM global                            | stackRestore                     | stackSave compared               |
// | every FS node: /, /dev, /proc, | JS objects (FSNode): mode, id, rdev,   | every own property set back to   | fingerprint of every own         |
// |  /tmp, /dev/shm, pipes,        |  a/m/ctime, link, node_ops/stream_ops, |  the recorded value; extra ones  |  property of every node, by      |
// |  sockets                       |  name_next, contents                   |  deleted                         |  identity                        |
// | directory entries              | node.contents (JS object)              | emptied, refilled in order       | fingerprinted entries            |
// | file bytes (in the JS heap,    | node.contents (typed array), usedBytes | the recorded array put back, its | bytes compared with the record   |
// |  outside the WASM cap)         |                                        |  recorded bytes copied in        |                                  |
// | name hash table                | FS.nameTable                           | every bucket set back            | fingerprinted bucket heads       |
// | FS counters and flags          | FS.nextInode, currentPath, … (every    | every own property of FS set     | fingerprinted                    |
// |                                |  own property of FS)                   |  back                            |                                  |
// | pipe/socket name counters      | PIPEFS/SOCKFS.nextname.current         | set back (or removed)            | fingerprinted                    |
// | open files                     | FS.streams + each stream + its shared  | extra streams closed; array and  | fingerprinted                    |
// |                                |  {position, flags}                     |  every recorded stream restored  |                                  |
// | terminals                      | TTY.ttys[*].input/output buffers       | emptied back to the record       | fingerprinted                    |
// | devices                        | FS.devices                             | (only JS can change it)          | fingerprinted                    |
// | environment (JS side)          | Module.ENV                             | (only JS can change it)          | fingerprinted                    |
// | Module's own properties        | JS object (~6,500 keys), locked        | set back (none can be added:     | every key and value compared     |
// |                                |  against new keys (module-lock.ts)     |  a deleted one retires)          |  (not extensible, still own)     |
// | FS / MEMFS / TTY objects       | JS objects                             | FS set back; others only by JS   | every own property, by identity  |
// | JS references held by Python   | hiwire table                           | entries set back                 | slot table compared first        |
// | function table (every pointer  | wasmTable (JS-writable, outside the    | cannot be trusted back           | every entry by identity          |
// |  C calls through), dyn. code   |  linear memory; wasm-table.ts)         |                                  |  (and the length): retire        |
// | dynamic libraries              | LDSO                                   | cannot be undone                 | count compared: retire           |
// | the JS realm's built-ins       | globalThis, prototypes                 | cannot be undone                 | fingerprinted: retire            |
// | timers, background tasks       | Node's timer lists                     | cancelled (timers.ts)            | (tracked set emptied)            |
// | top-level await's event loop   | Python objects (loop.py): tasks,       | WASM memory, as above            | (is the memory)                  |
// |                                |  futures, call_later handles           |                                  |                                  |
//
// HEAP8…HEAPF64 on Module are views the runtime re-creates when the memory grows: they are proven to
// view the current memory rather than compared by identity. Everything else compares by identity.

import { lockedModuleDifference, lockModule } from "./module-lock.ts";
import { recordTable, tableDifference, type WasmTable } from "./wasm-table.ts";
import { recordMemory, restoreMemory, type MemoryRecord } from "./memory-record.ts";

export { MEMORY_BLOCK, recordMemory, restoreMemory, type MemoryRecord } from "./memory-record.ts";

export interface EmscriptenFSNode {
  name: string;
  mode: number;
  id: number;
  contents?: Record<string, EmscriptenFSNode> | ArrayBufferView | null;
  usedBytes?: number;
  parent: EmscriptenFSNode;
  mount: { mountpoint: string; type?: { nextname?: { current?: number } } };
  mounted?: { root: EmscriptenFSNode } | null;
  name_next?: EmscriptenFSNode | null;
}
export interface EmscriptenFS {
  root: EmscriptenFSNode;
  filesystems: { NODEFS: object };
  mount(type: object, options: { root: string }, mountpoint: string): unknown;
  streams: (Record<string, unknown> | null | undefined)[];
  nameTable: (EmscriptenFSNode | null | undefined)[];
  devices: Record<string, unknown>;
  ignorePermissions: boolean;
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  mkdirTree(path: string): void;
  writeFile(path: string, data: Uint8Array | string): void;
  close(stream: object): void;
  lookupPath(path: string, opts?: object): { node: EmscriptenFSNode };
}
interface Tty {
  input: unknown[];
  output: unknown[];
}
export interface PyodideModule {
  HEAPU8: Uint8Array;
  FS: EmscriptenFS;
  TTY: { ttys: Record<string, Tty> };
  MEMFS: object;
  ENV: Record<string, unknown>;
  finalizationRegistry: { register(...a: unknown[]): void; unregister(...a: unknown[]): void };
  stackSave(): number;
  stackRestore(sp: number): void;
  __hiwire_get(index: number): unknown;
  __hiwire_set(index: number, value: unknown): number;
  _malloc_set_footprint_limit(bytes: number): number;
  _malloc_max_footprint(): number;
  _hiwire_num_refs(): number;
  __hiwire_slot_info(slot: number): number;
  wasmTable: WasmTable;
  LDSO: { loadedLibsByName: Record<string, unknown> };
}

// ---- the JS realm: not reset (only JS could change it), fingerprinted ----
// A guest that got hold of a JS object could plant something on a shared built-in (a Python callable
// as Function.prototype.toString) that a later run would meet. Every own key of each built-in and the
// identity of its value/getter/setter is recorded; a run that changed any of them retires the sidecar.
type RealmFingerprint = { target: object; keys: (string | symbol)[]; values: unknown[] }[];
const REALM_OBJECTS: object[] = [
  globalThis,
  Object,
  Function,
  Array,
  Promise,
  Reflect,
  JSON,
  Math,
  Symbol,
  Error,
  (globalThis as unknown as { WebAssembly: object }).WebAssembly,
  Object.prototype,
  Function.prototype,
  Array.prototype,
  Promise.prototype,
  String.prototype,
  Number.prototype,
  Boolean.prototype,
  Symbol.prototype,
  Error.prototype,
  RegExp.prototype,
  Map.prototype,
  Set.prototype,
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  Uint8Array.prototype,
  ArrayBuffer.prototype,
  Object.getPrototypeOf(async function () {}) as object,
];
// Node adds these to globalThis lazily (undici's fetch dispatcher, on first network-free use).
const LAZY_GLOBAL = (key: string | symbol) => typeof key === "symbol" && /^undici\./.test(key.description ?? "");
function fingerprintRealm(): RealmFingerprint {
  return REALM_OBJECTS.map((target) => {
    const keys = Reflect.ownKeys(target).filter((k) => target !== globalThis || !LAZY_GLOBAL(k));
    const values: unknown[] = [];
    for (const key of keys) {
      const d = Reflect.getOwnPropertyDescriptor(target, key);
      values.push(d && "value" in d ? d.value : d?.get, d?.set);
    }
    return { target, keys, values };
  });
}
function realmChanged(before: RealmFingerprint): string | undefined {
  const now = fingerprintRealm();
  for (let i = 0; i < before.length; i++) {
    const a = before[i]!;
    const b = now[i]!;
    const where = `JavaScript built-in #${i}`;
    if (a.keys.length !== b.keys.length || a.values.length !== b.values.length) {
      const added = b.keys.filter((k) => !a.keys.includes(k)).map(String);
      const removed = a.keys.filter((k) => !b.keys.includes(k)).map(String);
      return `${where} changed its properties (added ${added.join(", ") || "none"}; removed ${removed.join(", ") || "none"})`;
    }
    for (let k = 0; k < a.keys.length; k++) if (a.keys[k] !== b.keys[k]) return `${where} changed its properties`;
    for (let k = 0; k < a.values.length; k++)
      if (!Object.is(a.values[k], b.values[k])) return `${where}: property ${String(a.keys[k >> 1])} was replaced`;
  }
  return undefined;
}

// ---- the file system ----

/** Every node under `node` (mount points followed), by path; `path` "" is the root. */
export function walkFs(
  FS: EmscriptenFS,
  node: EmscriptenFSNode,
  path: string,
  out: Map<string, EmscriptenFSNode>,
): void {
  out.set(path || "/", node);
  const mounted = node.mounted?.root;
  if (mounted && mounted !== node) walkFs(FS, mounted, `${path}@`, out);
  if (!FS.isDir(node.mode) || !node.contents || ArrayBuffer.isView(node.contents)) return;
  for (const [name, child] of Object.entries(node.contents)) walkFs(FS, child, `${path}/${name}`, out);
}

/** A regular file's bytes, as a view (MEMFS keeps them in whatever typed array last grew them). */
export function fileBytes(node: EmscriptenFSNode): Uint8Array | undefined {
  const c = node.contents;
  if (!ArrayBuffer.isView(c)) return undefined;
  return new Uint8Array(c.buffer, c.byteOffset, Math.min(node.usedBytes ?? c.byteLength, c.byteLength));
}

/** Every node the guest could reach: the tree from the root (mounts included) and the name table. */
function allNodes(FS: EmscriptenFS): Map<EmscriptenFSNode, string> {
  const byPath = new Map<string, EmscriptenFSNode>();
  walkFs(FS, FS.root, "", byPath);
  const nodes = new Map<EmscriptenFSNode, string>();
  for (const [path, node] of byPath) nodes.set(node, path);
  // Nodes outside the tree: pipes, sockets, unlinked files still open, and their hash chains.
  for (let i = 0; i < FS.nameTable.length; i++) {
    for (let n = FS.nameTable[i]; n; n = n.name_next) if (!nodes.has(n)) nodes.set(n, `<hash ${i}: ${n.name}>`);
  }
  for (const s of FS.streams) {
    const n = s?.node as EmscriptenFSNode | undefined;
    if (n && !nodes.has(n)) nodes.set(n, `<stream ${String(s?.fd)}>`);
  }
  return nodes;
}

/** The own properties of an object, by key, as [key, value] pairs (values by identity). */
type Props = [string, unknown][];
function props(o: object): Props {
  return Object.keys(o).map((k) => [k, (o as Record<string, unknown>)[k]]);
}
function setProps(o: object, saved: Props): void {
  const target = o as Record<string, unknown>;
  const keep = new Set(saved.map(([k]) => k));
  for (const k of Object.keys(target)) if (!keep.has(k)) delete target[k];
  for (const [k, v] of saved) if (!Object.is(target[k], v)) target[k] = v;
}

interface NodeRecord {
  node: EmscriptenFSNode;
  props: Props;
  /** A directory's entries, in order. */
  entries?: [string, EmscriptenFSNode][];
  /** A regular file's bytes (a copy) and the array that held them. */
  file?: { array: ArrayBufferView; bytes: Uint8Array };
}

interface FsRecord {
  nodes: NodeRecord[];
  nameTable: (EmscriptenFSNode | null | undefined)[];
  fsProps: Props;
  streams: (Record<string, unknown> | null | undefined)[];
  streamProps: (Props | undefined)[];
  sharedProps: (Props | undefined)[];
  ttys: { tty: Tty; props: Props; input: unknown[]; output: unknown[] }[];
  /** PIPEFS / SOCKFS (reached through their nodes' mounts) and their name counters. */
  counters: Map<{ nextname?: { current?: number } }, number | undefined>;
}

function recordFs(M: PyodideModule): FsRecord {
  const FS = M.FS;
  const nodes: NodeRecord[] = [];
  const counters = new Map<{ nextname?: { current?: number } }, number | undefined>();
  for (const node of allNodes(FS).keys()) {
    const rec: NodeRecord = { node, props: props(node) };
    const c = node.contents;
    if (FS.isDir(node.mode) && c && !ArrayBuffer.isView(c)) rec.entries = Object.entries(c);
    else if (ArrayBuffer.isView(c)) rec.file = { array: c, bytes: fileBytes(node)!.slice() };
    nodes.push(rec);
    const type = node.mount?.type;
    if (type?.nextname) counters.set(type, type.nextname.current);
  }
  return {
    nodes,
    nameTable: FS.nameTable.slice(),
    fsProps: props(FS),
    streams: FS.streams.slice(),
    streamProps: FS.streams.map((s) => (s ? props(s) : undefined)),
    sharedProps: FS.streams.map((s) => (s && typeof s.shared === "object" && s.shared ? props(s.shared) : undefined)),
    ttys: Object.values(M.TTY.ttys).map((tty) => ({
      tty,
      props: props(tty),
      input: tty.input.slice(),
      output: tty.output.slice(),
    })),
    counters,
  };
}

/** Puts the whole file system back to the record (never fails: the fingerprint proves it worked). */
function rebuildFs(M: PyodideModule, rec: FsRecord): void {
  const FS = M.FS;
  const saved = FS.ignorePermissions;
  FS.ignorePermissions = true; // a guest's chmod 000 must not stop the cleanup
  try {
    // Streams the run opened are closed (a device's close may flush), then the table is put back.
    const keep = new Set(rec.streams);
    for (const s of FS.streams) {
      if (!s || keep.has(s)) continue;
      try {
        FS.close(s);
      } catch {
        // already closed or broken: dropping it from the table below is all that matters
      }
    }
    // Counters of file systems first seen now (a run's first pipe) go back to "never used".
    for (const n of allNodes(FS).keys()) {
      const type = n.mount?.type;
      if (type?.nextname && !rec.counters.has(type)) delete type.nextname.current;
    }
    FS.streams.length = 0;
    FS.streams.push(...rec.streams);
    rec.streams.forEach((s, fd) => {
      if (!s) return;
      setProps(s, rec.streamProps[fd]!);
      const shared = rec.sharedProps[fd];
      if (shared && typeof s.shared === "object" && s.shared) setProps(s.shared, shared);
    });
    for (const r of rec.nodes) {
      setProps(r.node, r.props);
      if (r.entries) {
        const dir = r.node.contents as Record<string, EmscriptenFSNode>;
        for (const k of Object.keys(dir)) delete dir[k];
        for (const [k, child] of r.entries) dir[k] = child;
      } else if (r.file) {
        const now = fileBytes(r.node)!;
        if (now.length !== r.file.bytes.length || Buffer.compare(now, r.file.bytes) !== 0) {
          new Uint8Array(r.file.array.buffer, r.file.array.byteOffset, r.file.array.byteLength).set(r.file.bytes);
        }
      }
    }
    for (let i = 0; i < Math.max(FS.nameTable.length, rec.nameTable.length); i++) FS.nameTable[i] = rec.nameTable[i];
    FS.nameTable.length = rec.nameTable.length;
    for (const [type, current] of rec.counters) {
      if (current === undefined) delete type.nextname!.current;
      else type.nextname!.current = current;
    }
    for (const t of rec.ttys) {
      // A flush replaces the buffer array: the recorded arrays go back, holding what they held.
      setProps(t.tty, t.props);
      t.tty.input.splice(0, t.tty.input.length, ...t.input);
      t.tty.output.splice(0, t.tty.output.length, ...t.output);
    }
  } finally {
    FS.ignorePermissions = saved;
  }
  // Last: FS's own properties (nextInode, currentPath, ignorePermissions, …) exactly as recorded.
  setProps(FS, rec.fsProps);
}

// ---- the fingerprint: everything JS-side the guest can change, as a flat list of values ----
// Labels are built only to explain a mismatch (a second pass), so a clean reset pays for values only.

const HEAP_VIEW = /^HEAP(8|16|32|64|U8|U16|U32|U64|F32|F64)$/;

function fingerprint(M: PyodideModule, labels?: string[]): unknown[] {
  const out: unknown[] = [];
  // Labels are strings built only in the labelling pass; a clean reset allocates no label at all.
  const add = (v: unknown, where: string, key?: string) => {
    out.push(v);
    if (labels) labels.push(key === undefined ? where : `${where}.${key}`);
  };
  const own = (where: string, o: object | null | undefined) => {
    if (!o) return add(o, where, "(missing)");
    const keys = Object.keys(o);
    add(keys.length, where, "(number of properties)");
    for (const k of keys) {
      add(k, where, "(its keys)");
      add((o as Record<string, unknown>)[k], where, k);
    }
  };
  const FS = M.FS;
  own("FS", FS);
  own("FS.devices", FS.devices);
  own("MEMFS", M.MEMFS);
  own("TTY", M.TTY);
  own("TTY.ttys", M.TTY.ttys);
  for (const [dev, tty] of Object.entries(M.TTY.ttys)) {
    own(`tty ${dev}`, tty);
    add(tty.input.length, `tty ${dev}`, "(input buffered)");
    add(tty.output.length, `tty ${dev}`, "(output buffered)");
    // The buffered bytes too: the file system's check stands in for its rebuild when nothing changed.
    for (const b of tty.input) add(b, `tty ${dev}`, "(an input byte)");
    for (const b of tty.output) add(b, `tty ${dev}`, "(an output byte)");
  }
  own("ENV", M.ENV);
  add(FS.streams.length, "FS.streams", "length");
  for (let fd = 0; fd < FS.streams.length; fd++) {
    const s = FS.streams[fd];
    add(s, `fd ${fd}`);
    if (s) {
      own(`fd ${fd}`, s);
      if (typeof s.shared === "object") own(`fd ${fd} shared`, s.shared);
    }
  }
  add(FS.nameTable.length, "FS.nameTable", "length");
  for (let i = 0; i < FS.nameTable.length; i++) add(FS.nameTable[i], "FS.nameTable", String(i));
  const nodes = allNodes(FS);
  add(nodes.size, "the file system", "(number of nodes)");
  for (const [node, path] of nodes) {
    add(node, path);
    own(path, node);
    const c = node.contents;
    if (FS.isDir(node.mode) && c && !ArrayBuffer.isView(c)) own(`${path} (entries)`, c);
    const type = node.mount?.type;
    if (type?.nextname) add(type.nextname.current, path, "(its file system's name counter)");
  }
  return out;
}

// ---- Module: 6,500 own properties, checked in one pass against the record ----

interface ModuleRecord {
  keys: (string | symbol)[];
  values: unknown[];
  /** Indexes of the memory views (HEAP8…): proven to view the current memory, not by identity. */
  views: Set<number>;
}
function recordModule(M: PyodideModule): ModuleRecord {
  const keys = Reflect.ownKeys(M);
  const values = keys.map((k) => (M as unknown as Record<string | symbol, unknown>)[k]);
  const views = new Set<number>();
  keys.forEach((k, i) => typeof k === "string" && HEAP_VIEW.test(k) && views.add(i));
  return { keys, values, views };
}
/** What differs between Module and the record, or undefined (Module is locked: module-lock.ts). */
function moduleDifference(M: PyodideModule, rec: ModuleRecord): string | undefined {
  return lockedModuleDifference(M, rec.keys, rec.values, rec.views, M.HEAPU8.buffer);
}
/** Module's own properties back as recorded (a lazily made cache, such as a text decoder, goes). */
function rebuildModule(M: PyodideModule, rec: ModuleRecord): void {
  const m = M as unknown as Record<string | symbol, unknown>;
  const keep = new Set(rec.keys);
  for (const k of Reflect.ownKeys(M)) if (!keep.has(k)) delete m[k];
  rec.keys.forEach((k, i) => {
    if (!rec.views.has(i) && !Object.is(m[k], rec.values[i])) m[k] = rec.values[i];
  });
}

function firstDifference(M: PyodideModule, before: { values: unknown[]; labels: string[] }): string | undefined {
  const now = fingerprint(M);
  const n = Math.max(now.length, before.values.length);
  for (let i = 0; i < n; i++) {
    if (!Object.is(now[i], before.values[i])) {
      return `the reset did not bring back ${before.labels[i] ?? "the file system's shape"}`;
    }
  }
  return undefined;
}

// ---- hiwire: Pyodide's table of JS references held by Python ----

function hiwireEntries(M: PyodideModule): unknown[] {
  const values: unknown[] = [];
  for (let i = 0; ; i++) {
    try {
      values.push(M.__hiwire_get(i));
    } catch {
      return values;
    }
  }
}

// Pyodide's hiwire keeps JS references by (slot, generation); part of that bookkeeping lives outside
// the linear memory we restore, and a run that creates or frees JS references (a guest poking at a
// leaked JsProxy) can leave it out of step with the restored memory ("hiwire_incref on invalid
// reference" in a later run). So the slot table is compared before the reset, and a run that
// changed it retires the sidecar rather than risk a corrupted interpreter.
const HIWIRE_SLOTS_CHECKED = 1024;
function hiwireSlotInfo(M: PyodideModule): number[] {
  const out: number[] = [M._hiwire_num_refs()];
  for (let i = 0; i < HIWIRE_SLOTS_CHECKED; i++) out.push(M.__hiwire_slot_info(i));
  return out;
}

// ---- the checkpoint ----

export interface Checkpoint {
  memory: MemoryRecord;
  hiwire: unknown[];
  hiwireSlots: number[];
  stackPointer: number;
  /** Every entry of the WASM function table (wasm-table.ts). */
  table: unknown[];
  libraries: number;
  realm: RealmFingerprint;
  fs: FsRecord;
  module: ModuleRecord;
  fingerprint: { values: unknown[]; labels: string[] };
}

/**
 * The time every node of the pristine tree carries: a sidecar's own start time would otherwise tell a
 * guest how long its sidecar has lived (and every sidecar would look different). 2000-01-01 UTC, not
 * the epoch: zipfile refuses to store files dated before 1980.
 */
const PRISTINE_TIME = Date.UTC(2000, 0, 1);

export function takeCheckpoint(M: PyodideModule): Checkpoint {
  for (const node of allNodes(M.FS).keys()) {
    const n = node as unknown as Record<string, unknown>;
    for (const k of ["atime", "mtime", "ctime"]) if (typeof n[k] === "number") n[k] = PRISTINE_TIME;
  }
  lockModule(M);
  const labels: string[] = [];
  const cp: Checkpoint = {
    memory: recordMemory(M.HEAPU8),
    hiwire: hiwireEntries(M),
    hiwireSlots: hiwireSlotInfo(M),
    stackPointer: M.stackSave(),
    table: recordTable(M.wasmTable),
    libraries: Object.keys(M.LDSO.loadedLibsByName).length,
    realm: fingerprintRealm(),
    fs: recordFs(M),
    module: recordModule(M),
    fingerprint: { values: [], labels },
  };
  cp.fingerprint.values = fingerprint(M, labels);
  return cp;
}

/** Puts the interpreter back to the checkpoint and proves it; returns why it cannot, if it cannot. */
export function restoreCheckpoint(M: PyodideModule, cp: Checkpoint): string | undefined {
  const slots = hiwireSlotInfo(M);
  for (let i = 0; i < slots.length; i++) {
    if (slots[i] !== cp.hiwireSlots[i]) return "the run changed Pyodide's JavaScript reference table";
  }
  const table = tableDifference(M.wasmTable, cp.table);
  if (table) return table;
  if (Object.keys(M.LDSO.loadedLibsByName).length !== cp.libraries) return "the run loaded a dynamic library";
  const tampered = realmChanged(cp.realm);
  if (tampered) return tampered;
  for (let i = 0; i < cp.hiwire.length; i++) {
    if (M.__hiwire_set(i, cp.hiwire[i]) < 0) return `hiwire slot ${i} could not be restored`;
  }
  M.stackRestore(cp.stackPointer);
  // Module and the file system are checked first; only what a check found changed is rebuilt and
  // checked again. A check that passes is the same proof that would follow a rebuild.
  const moduleChanged = moduleDifference(M, cp.module) !== undefined;
  const fsChanged = fsDifference(M, cp) !== undefined;
  try {
    if (moduleChanged) rebuildModule(M, cp.module);
    if (fsChanged) rebuildFs(M, cp.fs);
  } catch (error) {
    return `the state could not be rebuilt: ${String(error).slice(0, 200)}`;
  }
  // Last, the memory: nothing after this calls into WASM, so what it proves still holds at the end.
  const memory = restoreMemory(M.HEAPU8, cp.memory);
  if ("failed" in memory) return `the reset did not bring back the memory: ${memory.failed}`;
  // The proof of what was rebuilt (the rest was proven by its check above).
  if (M.stackSave() !== cp.stackPointer) return "the stack pointer did not come back";
  const moduleStill = moduleChanged ? moduleDifference(M, cp.module) : undefined;
  if (moduleStill) return `the reset did not bring back ${moduleStill}`;
  return fsChanged ? fsDifference(M, cp) : undefined;
}

/**
 * Why the interpreter's JS-side state no longer equals the checkpoint's, in the parts a session record
 * cannot carry (see session-state.ts), or undefined: then the linear memory, the file system and the
 * cwd are the whole of what differs.
 */
export function portabilityProblem(M: PyodideModule, cp: Checkpoint): string | undefined {
  const slots = hiwireSlotInfo(M);
  for (let i = 0; i < slots.length; i++) {
    if (slots[i] !== cp.hiwireSlots[i])
      return "the session holds JavaScript references (Pyodide's reference table changed)";
  }
  for (let i = 0; i < cp.hiwire.length; i++) {
    if (!Object.is(M.__hiwire_get(i), cp.hiwire[i])) return `the session changed JavaScript reference ${i}`;
  }
  const table = tableDifference(M.wasmTable, cp.table);
  if (table) return `the session changed the function table (${table})`;
  if (Object.keys(M.LDSO.loadedLibsByName).length !== cp.libraries)
    return "the session loaded a dynamic library (a compiled extension module)";
  const tampered = realmChanged(cp.realm);
  if (tampered) return tampered;
  const streams = M.FS.streams;
  if (streams.length > cp.fs.streams.length || streams.some((s, fd) => s !== cp.fs.streams[fd]))
    return "the session holds open files; close them first";
  return undefined;
}

/** The first recorded file byte or fingerprint value that differs, or undefined. */
function fsDifference(M: PyodideModule, cp: Checkpoint): string | undefined {
  for (const r of cp.fs.nodes) {
    if (r.file && Buffer.compare(fileBytes(r.node) ?? new Uint8Array(0), r.file.bytes) !== 0)
      return `the reset did not bring back the bytes of file node ${r.node.id}`;
  }
  return firstDifference(M, cp.fingerprint);
}
