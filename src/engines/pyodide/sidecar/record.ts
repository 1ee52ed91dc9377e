// A session's state as bytes, relative to this sidecar's checkpoint: what `session.snapshot()` takes
// and what a resume puts into a pristine sidecar. Part of the sidecar process (node: builtins and its
// own folder only).
//
// What moves, and why that is the whole state. The checkpoint's inventory (checkpoint.ts) splits the
// interpreter in two: state in the WASM linear memory plus the file system and the cwd, which are data
// and move; and JS-side state that cannot move (JS references Python holds, the function table,
// dynamic libraries, the realm's built-ins, open file streams). A session may be saved only while the
// second half still equals the checkpoint — then the target sidecar's own checkpoint supplies it — and
// anything else is refused with the reason (a session that loaded a C extension library, or holds an
// open file, stays where it is). Module's own properties are caches the reset rebuilds, not state.
//
// The record: zstd( u32 header length | header JSON | u32 chunk indexes | chunk bytes | file bytes ).
// Memory chunks (256 B) are those that differ from the checkpoint's, each stored XOR the checkpoint's
// bytes; files are every MEMFS node whose path, kind, mode, mtime or bytes differ from the
// checkpoint's, and the checkpoint's paths that are gone. Chunks, not 64 KiB blocks: a session that
// imported json/re/datetime differs in 134 blocks (8.8 MB) but in 595 chunks (152 KB), so there is
// ~58x less to copy, compress, inflate and apply; finding them costs two narrowing compares (4 KiB,
// then 256 B) inside the blocks that differ. A resume rebuilds from the record and then proves it:
// the memory compared chunk by chunk with what the record says it must hold (every other byte was
// just proven equal to the checkpoint), and the state captured again from the live interpreter must
// describe the same file system and cwd, field for field. Anything else retires the sidecar.
//
// A record that comes back is hostile input even after the host authenticated it (the sidecar that
// produced it ran guest code), so every field is bounded here before it touches the interpreter.

import { createHash } from "node:crypto";
import { constants as zlib, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import {
  fileBytes,
  MEMORY_BLOCK,
  portabilityProblem,
  restoreMemory,
  type Checkpoint,
  type EmscriptenFSNode,
  type PyodideModule,
} from "./checkpoint.ts";
import { memory } from "./limits.ts";
import { mib } from "./budget.ts";
import {
  checkHeader,
  CHUNK,
  kindOf,
  MAX_HEADER,
  RECORD_FORMAT,
  RecordProblem,
  SKIPPED,
  type FsEntry,
  type Header,
} from "./record-header.ts";

const PAGE = 4096;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

interface PristineNode {
  node: EmscriptenFSNode;
  mode: number;
  mtime: number;
  bytes?: Uint8Array;
}
const pristineTrees = new WeakMap<Checkpoint, Map<string, PristineNode>>();
const digests = new WeakMap<Checkpoint, string>();

/** Records the checkpoint's file tree by path; called right after the checkpoint, while it is pristine. */
export function recordPristineTree(M: PyodideModule, cp: Checkpoint): void {
  const tree = new Map<string, PristineNode>();
  for (const [p, node] of memfsTree(M)) {
    const bytes = FSisFile(node.mode) ? fileBytes(node)?.slice() : undefined;
    tree.set(p, { node, mode: node.mode, mtime: mtimeOf(node), ...(bytes ? { bytes } : {}) });
  }
  pristineTrees.set(cp, tree);
}

function pristineTree(cp: Checkpoint): Map<string, PristineNode> {
  const tree = pristineTrees.get(cp);
  if (!tree) throw new Error("the checkpoint's file tree was not recorded");
  return tree;
}

/** A digest of what a record is relative to: two sidecars may exchange records only when these match. */
export function checkpointDigest(cp: Checkpoint): string {
  const known = digests.get(cp);
  if (known) return known;
  const h = createHash("sha256");
  h.update(`${cp.memory.size}:${cp.stackPointer}:${pristineTree(cp).size}:`);
  cp.memory.blocks.forEach((b, i) => {
    if (b) h.update(`${i};`).update(b);
  });
  const digest = h.digest("hex");
  digests.set(cp, digest);
  return digest;
}

function FSisFile(mode: number): boolean {
  return (mode & S_IFMT) === S_IFREG;
}
function mtimeOf(node: EmscriptenFSNode): number {
  const t = (node as unknown as { mtime?: unknown }).mtime;
  return typeof t === "number" ? t : Number(t) || 0;
}

/** The MEMFS nodes by path (mounts of other file systems, /dev and /proc left out). */
function memfsTree(M: PyodideModule): Map<string, EmscriptenFSNode> {
  const out = new Map<string, EmscriptenFSNode>();
  const FS = M.FS;
  const walk = (node: EmscriptenFSNode, path: string) => {
    if (SKIPPED.test(path) || (node.mount as { type?: unknown }).type !== M.MEMFS) return;
    if (node.mounted) return; // a mount point: what is under it belongs to another file system
    out.set(path || "/", node);
    if (!FS.isDir(node.mode) || !node.contents || ArrayBuffer.isView(node.contents)) return;
    for (const [name, child] of Object.entries(node.contents)) walk(child, `${path}/${name}`);
  };
  walk(FS.root, "");
  return out;
}

interface Described {
  header: Omit<Header, "v" | "base" | "size" | "sp" | "chunks">;
  files: Uint8Array[];
}

/** The file system and cwd as differences from the checkpoint, or why they cannot be described. */
function describeFs(M: PyodideModule, cp: Checkpoint): Described | string {
  const pristine = pristineTree(cp);
  const live = memfsTree(M);
  const nodes: FsEntry[] = [];
  const files: Uint8Array[] = [];
  for (const [p, node] of live) {
    const k = kindOf(node.mode);
    if (!k) return `the session holds a special file (${p.slice(0, 200)}): only directories, files and links move`;
    const n = node as unknown as { link?: unknown };
    const mtime = mtimeOf(node);
    const bytes = k === "f" ? (fileBytes(node) ?? new Uint8Array(0)) : undefined;
    const before = pristine.get(p);
    if (before && before.node === node && before.mode === node.mode && before.mtime === mtime) {
      if (k !== "f" || (before.bytes && Buffer.compare(before.bytes, bytes!) === 0)) continue;
    }
    const entry: FsEntry = { p, k, m: node.mode, t: mtime };
    if (k === "f") {
      entry.n = bytes!.length;
      files.push(bytes!);
    }
    if (k === "l") entry.l = String(n.link);
    nodes.push(entry);
  }
  const remove: string[] = [];
  for (const p of pristine.keys()) if (!live.has(p)) remove.push(p);
  const FS = M.FS as unknown as {
    cwd(): string;
    analyzePath(p: string): { exists: boolean; object?: EmscriptenFSNode };
  };
  const cwd = String(FS.cwd());
  // A resume changes into it: a directory removed while it was the cwd is nowhere to change into.
  const here = FS.analyzePath(cwd);
  if (!here.exists || !here.object || !M.FS.isDir(here.object.mode))
    return `the working directory ${cwd.slice(0, 200)} no longer exists: change to another one (os.chdir) first`;
  return { header: { cwd, remove, nodes }, files };
}

/** Why a state was not taken because of its size (SnapshotUnsupportedError `size` on the host). */
export interface TooLarge {
  size: string;
}

/**
 * The session's state as a record, or why it cannot be taken (then nothing changed). `room`: the
 * bytes the capture may use (budget.ts): its raw bytes and their compressed copy must fit, or it is
 * refused before either is made.
 */
export function captureState(
  M: PyodideModule,
  cp: Checkpoint,
  room = Number.POSITIVE_INFINITY,
): Uint8Array | string | TooLarge {
  const problem = portabilityProblem(M, cp);
  if (problem) return problem;
  const fs = describeFs(M, cp);
  if (typeof fs === "string") return fs;

  const heap = Buffer.from(M.HEAPU8.buffer, M.HEAPU8.byteOffset, M.HEAPU8.length);
  if (heap.length % MEMORY_BLOCK !== 0) return "the memory is not whole blocks";
  const chunks = changedChunks(heap, cp);
  const n = chunks.length;
  const header: Header = {
    v: RECORD_FORMAT,
    base: checkpointDigest(cp),
    size: heap.length,
    sp: M.stackSave(),
    chunks: n,
    ...fs.header,
  };
  const files = fs.files.reduce((t, f) => t + f.length, 0);
  // The load's own checks, here, before anything is compressed: what they would refuse is never made.
  try {
    checkHeader(header, 4 * n + n * CHUNK + files);
  } catch (error) {
    if (error instanceof RecordProblem) return error.message;
    throw error;
  }
  // Padded to 4 bytes (JSON allows trailing spaces) so the indexes and chunks are aligned for xorInto.
  let json = Buffer.from(JSON.stringify(header), "utf8");
  if (json.length % 4) json = Buffer.concat([json, Buffer.alloc(4 - (json.length % 4), 0x20)]);
  if (json.length > MAX_HEADER)
    return `its file system is too large to describe (${json.length} bytes of paths and times, over ${MAX_HEADER})`;
  // The raw bytes, then at most as many again compressed (zstd's worst case is a few bytes more per 128 KiB).
  const rawBytes = 4 + json.length + 4 * n + n * CHUNK + files;
  const need = 2 * rawBytes + (rawBytes >> 7);
  if (need > room)
    return {
      size: `taking its state out (${mib(rawBytes)} of memory changes and files) needs about ${mib(need)}, and its sidecar has ${mib(room)} left under its process memory cap: it stays where it is (free some of it, or raise limits.memoryMb)`,
    };
  const at = 4 + json.length;
  const raw = Buffer.allocUnsafeSlow(at + 4 * n + n * CHUNK + files);
  raw.writeUInt32LE(json.length, 0);
  json.copy(raw, 4);
  let out = at + 4 * n;
  for (let k = 0; k < n; k++) {
    const c = chunks[k]!;
    raw.writeUInt32LE(c, at + 4 * k);
    // Stored as the difference from the checkpoint's bytes: mostly zeros, which compress ~10x.
    const from = c * CHUNK;
    xorInto(raw.subarray(out, out + CHUNK), heap.subarray(from, from + CHUNK), baseChunk(cp, c));
    out += CHUNK;
  }
  for (const f of fs.files) {
    raw.set(f, out);
    out += f.length;
  }
  return compress(raw);
}

/**
 * The indexes of the chunks of `heap` that differ from the checkpoint (zeros past its memory), in
 * order: every block compared whole, a differing one narrowed to its differing 4 KiB pages, then to
 * their differing chunks (each a memcmp; no byte is skipped).
 */
function changedChunks(heap: Buffer, cp: Checkpoint): number[] {
  const out: number[] = [];
  for (let at = 0, i = 0; at < heap.length; at += MEMORY_BLOCK, i++) {
    const want = baseBlock(cp, i) ?? ZERO;
    if (heap.compare(want, 0, MEMORY_BLOCK, at, at + MEMORY_BLOCK) === 0) continue;
    for (let p = 0; p < MEMORY_BLOCK; p += PAGE) {
      if (heap.compare(want, p, p + PAGE, at + p, at + p + PAGE) === 0) continue;
      for (let c = p; c < p + PAGE; c += CHUNK)
        if (heap.compare(want, c, c + CHUNK, at + c, at + c + CHUNK) !== 0) out.push((at + c) / CHUNK);
    }
  }
  return out;
}

/** The checkpoint's bytes of chunk `c` (undefined: zeros, or past the checkpoint's memory). */
function baseChunk(cp: Checkpoint, c: number): Buffer | undefined {
  const block = baseBlock(cp, Math.floor((c * CHUNK) / MEMORY_BLOCK));
  if (!block) return undefined;
  const off = (c * CHUNK) % MEMORY_BLOCK;
  return block.subarray(off, off + CHUNK);
}

const ZERO = Buffer.alloc(MEMORY_BLOCK);

/** out = a XOR b (b undefined: a copy of a); returns out. */
function xorInto(out: Buffer, a: Uint8Array, b: Uint8Array | undefined): Buffer {
  if (!b) {
    out.set(a);
    return out;
  }
  if ((out.byteOffset | a.byteOffset | b.byteOffset) & 3) {
    for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
    return out;
  }
  // 32 bits at a time (the blocks are 64 KiB, 4-byte aligned in the heap and in fresh buffers).
  const n = a.length >>> 2;
  const o32 = new Uint32Array(out.buffer, out.byteOffset, n);
  const a32 = new Uint32Array(a.buffer, a.byteOffset, n);
  const b32 = new Uint32Array(b.buffer, b.byteOffset, n);
  for (let i = 0; i < n; i++) o32[i] = a32[i]! ^ b32[i]!;
  for (let i = n << 2; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

// zstd at level 1: ~4x faster than deflate for the same size on this data (memory blocks).
function compress(raw: Buffer): Buffer {
  return zstdCompressSync(raw, { params: { [zlib.ZSTD_c_compressionLevel]: 1 } });
}

// ---- parsing: every field bounded before it is used (record-header.ts, the capture's own rules) ----

function fail(what: string): never {
  throw new Error(`the session record is malformed: ${what}`);
}

/** A record refused before anything of it reached the interpreter (the sidecar is pristine still). */
class Refused extends Error {
  readonly size: boolean;
  constructor(message: string, size: boolean) {
    super(message);
    this.size = size;
  }
}

function parse(record: Uint8Array, maxBytes: number, room: number): { header: Header; payload: Buffer } {
  let raw: Buffer;
  // The inflate holds its output twice at its end (the pieces, and the buffer they are joined into).
  const fits = Math.floor(Math.max(0, room) / 2);
  const cap = Math.min(maxBytes, fits);
  try {
    raw = zstdDecompressSync(record, { maxOutputLength: cap });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
      throw new Refused(
        fits < maxBytes
          ? `its state inflates past the ${mib(fits)} this sidecar can inflate under its process memory cap (${mib(room)} left)`
          : `its state inflates past ${mib(maxBytes)}`,
        true,
      );
    fail(`it does not inflate (${String((error as Error).message).slice(0, 100)})`);
  }
  if (raw.length < 4) fail("too short");
  const headerLength = raw.readUInt32LE(0);
  if (headerLength > MAX_HEADER || 4 + headerLength > raw.length) fail("its header length");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.subarray(4, 4 + headerLength).toString("utf8"));
  } catch {
    fail("its header is not JSON");
  }
  let header: Header;
  try {
    header = checkHeader(parsed, raw.length);
  } catch (error) {
    if (error instanceof RecordProblem) fail(error.message);
    throw error;
  }
  const { chunks } = header;
  const fileTotal = header.nodes.reduce((t, e) => t + (e.n ?? 0), 0);
  // 4-byte aligned for the XOR below when the header was padded (the capture pads it); a record whose
  // header is not gets its payload copied into a buffer of its own rather than read byte by byte.
  const body = raw.subarray(4 + headerLength);
  const payload = body.byteOffset % 4 === 0 ? body : Buffer.from(Uint8Array.from(body).buffer);
  if (payload.length !== chunks * (4 + CHUNK) + fileTotal) fail("its payload length");
  const chunkCount = header.size / CHUNK;
  let last = -1;
  for (let k = 0; k < chunks; k++) {
    const c = payload.readUInt32LE(4 * k);
    if (c >= chunkCount) fail("a chunk index");
    if (c <= last) fail("chunk indexes out of order");
    last = c;
  }
  return { header, payload };
}

// ---- applying: rebuild from the record, then prove ----

interface WritableFS {
  ignorePermissions: boolean;
  analyzePath(p: string, dontResolveLastLink?: boolean): { exists: boolean; object?: EmscriptenFSNode };
  isDir(mode: number): boolean;
  mkdir(p: string, mode: number): void;
  rmdir(p: string): void;
  unlink(p: string): void;
  symlink(target: string, p: string): void;
  writeFile(p: string, data: Uint8Array): void;
  chmod(p: string, mode: number): void;
  utime(p: string, atime: number, mtime: number): void;
  chdir(p: string): void;
  lookupPath(p: string, opts?: object): { node: EmscriptenFSNode };
}

function removeTree(FS: WritableFS, p: string): void {
  // A link is removed, never followed: its target is not what the record names.
  const found = FS.analyzePath(p, true);
  if (!found.exists || !found.object) return;
  const node = found.object;
  if (FS.isDir(node.mode) && node.contents && !ArrayBuffer.isView(node.contents)) {
    for (const name of Object.keys(node.contents)) removeTree(FS, `${p}/${name}`);
    FS.rmdir(p);
  } else FS.unlink(p);
}

/**
 * Why a record was not loaded. `retire`: it was partly applied, or could not be proven (the caller
 * retires the sidecar: a half-applied record is never served); otherwise nothing of it reached the
 * interpreter and the sidecar is pristine still. `size`: it is too large here.
 */
export interface LoadProblem {
  why: string;
  retire: boolean;
  size?: boolean;
}

/** What a load may take: the inflate cap, the bytes it may use (budget.ts), the WASM memory a run may have. */
export interface LoadBounds {
  maxBytes: number;
  room: number;
  memoryCap: number;
}

/** Makes this pristine sidecar hold the session the record describes, and proves it; or says why not. */
export function applyState(
  M: PyodideModule,
  cp: Checkpoint,
  record: Uint8Array,
  bounds: LoadBounds,
): LoadProblem | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(record, bounds.maxBytes, bounds.room);
  } catch (error) {
    return { why: String((error as Error).message), retire: false, size: error instanceof Refused && error.size };
  }
  const { header: h, payload } = parsed;
  if (h.base !== checkpointDigest(cp))
    return { why: "the record was taken from another engine checkpoint", retire: false };
  // The work, bounded before it is done: the session's memory must be one its runs may have here, and
  // its files and the memory's growth must fit beside the inflated record.
  const heapNow = M.HEAPU8.length;
  if (h.size > Math.max(heapNow, bounds.memoryCap))
    return {
      why: `its memory (${mib(h.size)}) is over limits.memoryMb here (${mib(bounds.memoryCap)})`,
      retire: false,
      size: true,
    };
  const files = h.nodes.reduce((t, e) => t + (e.n ?? 0), 0);
  const need = files + Math.max(0, h.size - heapNow);
  const left = bounds.room - payload.length;
  if (need > left)
    return {
      why: `putting it back needs ${mib(need)} for its files and memory, and this sidecar has ${mib(left)} left under its process memory cap`,
      retire: false,
      size: true,
    };
  const problem = applyParsed(M, cp, h, payload);
  return problem === undefined ? undefined : { why: problem, retire: true };
}

function applyParsed(M: PyodideModule, cp: Checkpoint, h: Header, payload: Buffer): string | undefined {
  const FS = M.FS as unknown as WritableFS;
  try {
    // Growing first: it calls into WASM (malloc, sbrk), which the memory copy below must come after.
    if (M.HEAPU8.length < h.size) {
      const saved = memory.capBytes;
      memory.capBytes = Number.POSITIVE_INFINITY;
      // One allocation of the shortfall first fills the free space at the heap's top, so it grows the
      // memory short by that much (a 113 MB session made on one sidecar was refused by every fresh
      // one: "could not grow"). Allocations of what is still short are held until it is all there
      // (at most a few: the second finds the top empty), then freed; the memory copy below replaces
      // malloc's state with the session's anyway.
      const m = M as unknown as { _malloc(n: number): number; _free(p: number): void };
      const held: number[] = [];
      try {
        for (let i = 0; i < 4 && M.HEAPU8.length < h.size; i++) {
          const p = m._malloc(h.size - M.HEAPU8.length);
          if (!p) break;
          held.push(p);
        }
      } finally {
        for (const p of held) m._free(p);
        memory.capBytes = saved;
      }
      if (M.HEAPU8.length < h.size) return `the memory could not grow to ${h.size} bytes`;
    }
    const saved = FS.ignorePermissions;
    FS.ignorePermissions = true;
    try {
      for (const p of [...h.remove].sort((a, b) => b.length - a.length)) removeTree(FS, p);
      let at = memoryBytes(h);
      for (const e of h.nodes) {
        if (e.p === "/") {
          if (e.k !== "d") return "the record makes the root something other than a directory";
          FS.chmod("/", e.m);
          continue;
        }
        const parentPath = e.p.slice(0, e.p.lastIndexOf("/")) || "/";
        const parentAt = FS.lookupPath(parentPath, { follow: true }) as { node: EmscriptenFSNode; path?: string };
        const parent = parentAt.node;
        // A record never names a path through a link (the capture does not descend into links), so a
        // parent that resolves elsewhere (a link planted by an earlier entry, into /dev or a mount) is
        // refused rather than written through.
        if (
          parentAt.path !== parentPath ||
          !FS.isDir(parent.mode) ||
          (parent.mount as { type?: unknown }).type !== M.MEMFS ||
          parent.mounted
        )
          return `a recorded path is not on the session's file system: ${e.p.slice(0, 200)}`;
        const there = FS.analyzePath(e.p, true);
        if (there.exists && there.object && kindOf(there.object.mode) !== e.k) removeTree(FS, e.p);
        else if (there.exists && e.k === "l") FS.unlink(e.p);
        if (e.k === "d" && !FS.analyzePath(e.p, true).exists) FS.mkdir(e.p, e.m);
        if (e.k === "f") {
          FS.writeFile(e.p, payload.subarray(at, at + e.n!));
          at += e.n!;
        }
        if (e.k === "l") FS.symlink(e.l!, e.p);
        else FS.chmod(e.p, e.m);
      }
      // Times last, children first: creating an entry touches its directory's time.
      for (const e of [...h.nodes].reverse()) if (e.k !== "l") FS.utime(e.p, e.t, e.t);
      FS.chdir(h.cwd);
    } finally {
      FS.ignorePermissions = saved;
    }
  } catch (error) {
    return `the file system could not be rebuilt: ${String(error).slice(0, 200)}`;
  }
  // The memory last: nothing after this calls into WASM. First the checkpoint's bytes (and zeros past
  // it), then the record's chunks over them.
  const heap = Buffer.from(M.HEAPU8.buffer, M.HEAPU8.byteOffset, M.HEAPU8.length);
  const base = restoreMemory(M.HEAPU8, cp.memory);
  if ("failed" in base) return base.failed;
  // The heap holds the checkpoint's bytes now, so XOR-ing each recorded difference in is the chunk.
  for (let k = 0; k < h.chunks; k++) {
    const at = chunkIndex(payload, k) * CHUNK;
    const chunk = heap.subarray(at, at + CHUNK);
    xorInto(chunk, chunk, chunkBytes(payload, h, k));
  }
  M.stackRestore(h.sp);
  return proveState(M, cp, h, payload);
}

/** Where the file bytes start in a payload: after the chunk indexes and bytes. */
function memoryBytes(h: Header): number {
  return h.chunks * (4 + CHUNK);
}
function chunkIndex(payload: Buffer, k: number): number {
  return payload.readUInt32LE(4 * k);
}
function chunkBytes(payload: Buffer, h: Header, k: number): Buffer {
  const at = 4 * h.chunks + k * CHUNK;
  return payload.subarray(at, at + CHUNK);
}

/** The checkpoint's block `i` (undefined: zeros, or past the checkpoint's memory). */
function baseBlock(cp: Checkpoint, i: number): Buffer | undefined {
  return i * MEMORY_BLOCK < cp.memory.size ? cp.memory.blocks[i] : undefined;
}

/** The proof: the live interpreter, described again, is what the record says, field for field. */
function proveState(M: PyodideModule, cp: Checkpoint, h: Header, payload: Buffer): string | undefined {
  if (M.stackSave() !== h.sp) return "the stack pointer did not come back";
  // Every byte outside the recorded chunks was proven equal to the checkpoint by restoreMemory just
  // before, and nothing has written to the memory since (one thread, no call into WASM in between):
  // the recorded chunks are what is left to prove.
  const heap = Buffer.from(M.HEAPU8.buffer, M.HEAPU8.byteOffset, M.HEAPU8.length);
  const scratch = Buffer.allocUnsafe(CHUNK);
  for (let k = 0; k < h.chunks; k++) {
    const c = chunkIndex(payload, k);
    const want = xorInto(scratch, chunkBytes(payload, h, k), baseChunk(cp, c));
    const at = c * CHUNK;
    if (heap.compare(want, 0, CHUNK, at, at + CHUNK) !== 0) return `the memory at ${at} did not come back`;
  }
  return proveFs(M, cp, h, payload);
}

/**
 * Every live path is either recorded (and then holds exactly the recorded kind, mode, time, bytes or
 * target) or untouched since the checkpoint; every removed path is gone; the cwd is the recorded one.
 */
function proveFs(M: PyodideModule, cp: Checkpoint, h: Header, payload: Buffer): string | undefined {
  const pristine = pristineTree(cp);
  const live = memfsTree(M);
  const recorded = new Map<string, { e: FsEntry; bytes?: Buffer }>();
  let at = memoryBytes(h);
  for (const e of h.nodes) {
    if (e.k === "f") {
      recorded.set(e.p, { e, bytes: payload.subarray(at, at + e.n!) });
      at += e.n!;
    } else recorded.set(e.p, { e });
  }
  for (const [p, node] of live) {
    const r = recorded.get(p);
    const where = p.slice(0, 200);
    if (r) {
      const { e } = r;
      if (kindOf(node.mode) !== e.k || node.mode !== e.m) return `the file node ${where} did not come back`;
      if (e.k !== "l" && mtimeOf(node) !== e.t) return `the time of ${where} did not come back`;
      if (e.k === "l" && String((node as unknown as { link?: unknown }).link) !== e.l)
        return `the link ${where} did not come back`;
      if (e.k === "f" && Buffer.compare(fileBytes(node) ?? new Uint8Array(0), r.bytes!) !== 0)
        return `the bytes of ${where} did not come back`;
      continue;
    }
    const before = pristine.get(p);
    if (!before || before.node !== node || before.mode !== node.mode || before.mtime !== mtimeOf(node))
      return `${where} is neither in the record nor as the checkpoint left it`;
    if (before.bytes && Buffer.compare(before.bytes, fileBytes(node) ?? new Uint8Array(0)) !== 0)
      return `${where} is neither in the record nor as the checkpoint left it`;
  }
  for (const p of recorded.keys()) if (!live.has(p)) return `${p.slice(0, 200)} did not come back`;
  const removed = new Set(h.remove);
  for (const p of removed) if (live.has(p)) return `${p.slice(0, 200)} did not stay removed`;
  for (const p of pristine.keys()) if (!live.has(p) && !removed.has(p)) return `${p.slice(0, 200)} went missing`;
  if (String((M.FS as unknown as { cwd(): string }).cwd()) !== h.cwd) return "the cwd did not come back";
  return undefined;
}
