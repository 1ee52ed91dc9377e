// What a session record's header may say: the one definition the two sides of a record share. Part of
// the sidecar process (it imports only its own folder).
//
// captureState (record.ts) checks the header it has just built with checkHeader, before anything is
// compressed: a state this definition cannot describe (a path or link target over 4,096 characters,
// more than 100,000 changed nodes, a time that is not a finite number) is refused then, with the
// reason, and the session stays where it is. parse (record.ts) checks a stored header with the same
// function before anything touches the interpreter. So a record a sidecar makes is a record a sidecar
// loads: never bytes that look saved and are refused by their own resume (after an idle eviction, or on
// another replica, that lost the session without a word).
//
// Times are any finite number of milliseconds in Date's range, fractional or negative: MEMFS keeps what
// `os.utime` gave it, and a resume sets exactly that back.

import { MEMORY_BLOCK } from "./memory-record.ts";

export const RECORD_FORMAT = 2;
/** The unit of memory a record stores; divides MEMORY_BLOCK and PAGE. */
export const CHUNK = 256;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
/** The most a header's JSON may take. */
export const MAX_HEADER = 16 << 20;
/** The longest path or link target a record carries (Linux's PATH_MAX). */
export const MAX_PATH = 4096;
/** The most changed (or removed) file system nodes a record carries. */
export const MAX_NODES = 100_000;
/** The WASM32 address space: no memory record may claim more. */
export const MAX_MEMORY = 4 * 1024 * 1024 * 1024;
/** Date's range: the most a node's time may be from the epoch, in milliseconds. */
const MAX_TIME = 8.64e15;
/** Not part of a session's state: devices and the kernel's views are the sidecar's own. */
export const SKIPPED = /^\/(dev|proc)(\/|$)/;

export interface FsEntry {
  /** Absolute path. */
  p: string;
  /** d: directory, f: regular file, l: symbolic link. */
  k: "d" | "f" | "l";
  m: number;
  /** Modification time, milliseconds (any finite number in Date's range). */
  t: number;
  /** A file's length in bytes (its bytes follow in the payload). */
  n?: number;
  /** A link's target. */
  l?: string;
}
export interface Header {
  v: number;
  base: string;
  size: number;
  sp: number;
  cwd: string;
  /** How many memory chunks follow (their indexes, then their bytes). */
  chunks: number;
  remove: string[];
  nodes: FsEntry[];
}

/** A header this definition refuses; `message` names what (said as is on capture, "malformed" on load). */
export class RecordProblem extends Error {}

function fail(what: string): never {
  throw new RecordProblem(what);
}

export function kindOf(mode: number): FsEntry["k"] | undefined {
  const t = mode & S_IFMT;
  return t === S_IFDIR ? "d" : t === S_IFREG ? "f" : t === S_IFLNK ? "l" : undefined;
}

const shown = (s: string) => (s.length > 120 ? `${s.slice(0, 120)}… (${s.length} characters)` : s);

function int(v: unknown, max: number, what: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || v > max) fail(what);
  return v;
}

/** A path a record may name: absolute, normalized, at most MAX_PATH; `device`: /dev and /proc allowed. */
function path(v: unknown, what: string, device = false): string {
  if (typeof v !== "string" || v.length === 0 || v[0] !== "/" || v.includes("\0")) fail(what);
  if (v.length > MAX_PATH) fail(`${what} is longer than ${MAX_PATH} characters: ${shown(v)}`);
  if (
    v !== "/" &&
    v
      .split("/")
      .slice(1)
      .some((s) => s === "" || s === "." || s === "..")
  )
    fail(`${what} is not a normalized absolute path: ${shown(v)}`);
  if (!device && SKIPPED.test(v)) fail(`${what} is a device path: ${shown(v)}`);
  return v;
}

function time(v: unknown, where: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || Math.abs(v) > MAX_TIME)
    fail(`the time of ${shown(where)} is not a date (${String(v)})`);
  return v;
}

/**
 * The header, every field bounded, or RecordProblem naming the first that is not. `payloadBytes`: how
 * many bytes follow the header (a file's length is at most that).
 */
export function checkHeader(raw: unknown, payloadBytes: number): Header {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail("its header is not an object");
  const h = raw as Record<string, unknown>;
  if (h.v !== RECORD_FORMAT) fail("its format version");
  if (typeof h.base !== "string" || !/^[0-9a-f]{64}$/.test(h.base)) fail("its base digest");
  const size = int(h.size, MAX_MEMORY, "its memory size");
  if (size % MEMORY_BLOCK !== 0) fail("its memory size is not whole blocks");
  const sp = int(h.sp, size, "its stack pointer");
  const chunks = int(h.chunks, size / CHUNK, "its chunk count");
  // The cwd may be /dev or /proc: a resume only changes into it, and they are in every sidecar.
  const cwd = path(h.cwd, "the working directory", true);
  if (!Array.isArray(h.remove)) fail("its removals");
  if (h.remove.length > MAX_NODES) fail(`it removes more than ${MAX_NODES} files or directories`);
  const remove = h.remove.map((p) => path(p, "a removed path"));
  if (!Array.isArray(h.nodes)) fail("its nodes");
  if (h.nodes.length > MAX_NODES) fail(`more than ${MAX_NODES} files, directories and links changed`);
  const nodes = h.nodes.map((item: unknown): FsEntry => {
    if (typeof item !== "object" || item === null) fail("a node");
    const e = item as Record<string, unknown>;
    const k = e.k;
    if (k !== "d" && k !== "f" && k !== "l") fail("a node's kind");
    const p = path(e.p, "a path");
    const m = int(e.m, 0o177777, "a node's mode");
    if (kindOf(m) !== k) fail("a node's mode does not match its kind");
    const entry: FsEntry = { p, k, m, t: time(e.t, p) };
    if (k === "f") entry.n = int(e.n, payloadBytes, "a file's length");
    if (k === "l") {
      if (typeof e.l !== "string" || e.l.includes("\0")) fail("a link's target");
      if (e.l.length > MAX_PATH)
        fail(`the target of the link ${shown(p)} is longer than ${MAX_PATH} characters: ${shown(e.l)}`);
      entry.l = e.l;
    }
    return entry;
  });
  return { v: RECORD_FORMAT, base: h.base, size, sp, cwd, chunks, remove, nodes };
}
