// A session snapshot as bytes: the one room that writes and reads them. A snapshot that comes back is
// hostile input exactly like a sidecar's reply (it was stored somewhere, by someone), so reading it
// checks, in this order, before anything else looks at it: its size against the cap, its framing, its
// key id, and its HMAC-SHA256 tag under the host key (the guest never sees the key); only then is the
// header parsed, each field bounded; the state inside stays opaque here and is checked again by the
// engine that loads it.
//
// Layout (all integers little-endian):
//   magic "WCSNAP" (6) | format u8 | reserved u8 | total length u32 | key id (8) | tag (32) |
//   header length u32 | header JSON | state
// The tag covers every byte but itself. The key id (the first 8 bytes of HMAC(key, "wasmcell key id"))
// only tells "another key" apart from "changed bytes"; it says nothing of the key.

import { createHmac, timingSafeEqual } from "node:crypto";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import { ENGINE_INFO, ENGINES, type EngineName, type Language } from "../../core/types.ts";

const MAGIC = Buffer.from("WCSNAP", "latin1");
export const SNAPSHOT_FORMAT = 1;
const TAG = 32;
const KEY_ID = 8;
const PREFIX = MAGIC.length + 2 + 4 + KEY_ID + TAG;
const MAX_HEADER = 64 * 1024;

/** The engines whose sessions' state can be bytes (ENGINE_INFO's `snapshots`). */
export type SnapshotEngine = {
  [E in EngineName]: (typeof ENGINE_INFO)[E]["snapshots"] extends true ? E : never;
}[EngineName];

/** What a snapshot says about itself (and what resume checks against the sandbox resuming it). */
export interface SnapshotHeader {
  engine: SnapshotEngine;
  language: Language;
  /** The engine's version (Pyodide's, or the QuickJS build's). */
  engineVersion: string;
  /** What the state is relative to: the engine image / package lock digest (Pyodide: the snapshot key). */
  lock: string;
  /**
   * The engine checkpoint the state is relative to, when the lock alone does not name it (Pyodide:
   * the sha256 of the engine snapshot file its sidecar started from; two builds of one lock differ).
   */
  base?: string;
  /** The sandbox's limits when it was taken (for the record; a resume runs under its own). */
  limits: Record<string, number>;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

function keyId(key: Uint8Array): Buffer {
  return createHmac("sha256", key).update("wasmcell key id").digest().subarray(0, KEY_ID);
}

/**
 * Frames, authenticates and returns a snapshot. One over `maxBytes` (`sessions.maxSnapshotBytes`) is
 * never made: openSnapshot refuses it first thing, so it could only be bytes that look saved and
 * resume nowhere (an eviction would lose the session). SnapshotUnsupportedError `size` instead.
 * Every engine passes its sandbox's cap; omitted (no cap) only where a test crafts a blob.
 */
export function sealSnapshot(
  key: Uint8Array,
  header: SnapshotHeader,
  state: Uint8Array,
  maxBytes = Number.POSITIVE_INFINITY,
): Uint8Array {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const size = PREFIX + 4 + json.length + state.length;
  if (size > maxBytes)
    throw new SnapshotUnsupportedError(
      "size",
      `the session's snapshot would be ${size} bytes, over sessions.maxSnapshotBytes (${maxBytes}): it stays where it is`,
    );
  const out = Buffer.alloc(size);
  MAGIC.copy(out, 0);
  out[MAGIC.length] = SNAPSHOT_FORMAT;
  out.writeUInt32LE(out.length, MAGIC.length + 2);
  keyId(key).copy(out, MAGIC.length + 6);
  out.writeUInt32LE(json.length, PREFIX);
  json.copy(out, PREFIX + 4);
  out.set(state, PREFIX + 4 + json.length);
  tag(key, out).copy(out, PREFIX - TAG);
  return out;
}

function tag(key: Uint8Array, blob: Buffer): Buffer {
  const at = PREFIX - TAG;
  return createHmac("sha256", key)
    .update(blob.subarray(0, at))
    .update(blob.subarray(at + TAG))
    .digest();
}

export interface ExpectedSnapshot {
  engine: SnapshotHeader["engine"];
  engineVersion: string;
  lock: string;
}

const reject = (reason: ConstructorParameters<typeof SnapshotRejectedError>[0], message: string): never => {
  throw new SnapshotRejectedError(reason, message);
};

/**
 * The header and state of an authenticated snapshot, or a SnapshotRejectedError whose `reason` names
 * the first check it failed; with `expected`, also one made for that engine and lock (checkMadeFor).
 */
export function openSnapshot(
  key: Uint8Array,
  input: unknown,
  maxBytes: number,
  expected?: ExpectedSnapshot,
): { header: SnapshotHeader; state: Uint8Array } {
  if (!(input instanceof Uint8Array)) return reject("corrupt", "a snapshot is a Uint8Array (what snapshot() returned)");
  if (input.length > maxBytes)
    return reject("size", `${input.length} bytes is over sessions.maxSnapshotBytes (${maxBytes})`);
  const blob = Buffer.from(input.buffer, input.byteOffset, input.length);
  if (blob.length < PREFIX + 4 || !blob.subarray(0, MAGIC.length).equals(MAGIC))
    return reject("corrupt", "these bytes are not a wasmcell session snapshot");
  const declared = blob.readUInt32LE(MAGIC.length + 2);
  if (declared !== blob.length)
    return reject("corrupt", `it says it is ${declared} bytes long and is ${blob.length} (cut short, or padded)`);
  if (!timingSafeEqual(blob.subarray(MAGIC.length + 6, MAGIC.length + 6 + KEY_ID), keyId(key)))
    return reject(
      "key",
      "it was made under another key: a snapshot resumes only where sessions.key is the key it was made with (the default key is random per process)",
    );
  if (!timingSafeEqual(blob.subarray(PREFIX - TAG, PREFIX), tag(key, blob)))
    return reject("authentication", "its bytes do not match its tag: it was changed after it was made");
  // Authenticated from here on: still bounded, since a host bug must not become a crash.
  if (blob[MAGIC.length] !== SNAPSHOT_FORMAT)
    return reject("version", `format ${blob[MAGIC.length]}; this wasmcell reads format ${SNAPSHOT_FORMAT}`);
  const headerLength = blob.readUInt32LE(PREFIX);
  if (headerLength > MAX_HEADER || PREFIX + 4 + headerLength > blob.length)
    return reject("corrupt", "its header length");
  let raw: unknown;
  try {
    raw = JSON.parse(blob.subarray(PREFIX + 4, PREFIX + 4 + headerLength).toString("utf8"));
  } catch {
    return reject("corrupt", "its header is not JSON");
  }
  const header = checkHeader(raw);
  if (expected) checkMadeFor(header, expected);
  return { header, state: blob.subarray(PREFIX + 4 + headerLength) };
}

/** Throws unless an (authenticated) header names this engine, its version and its lock. */
export function checkMadeFor(header: SnapshotHeader, expected: ExpectedSnapshot): void {
  if (header.engine !== expected.engine)
    reject("engine", `it was made by the ${header.engine} engine, not ${expected.engine}`);
  if (header.engineVersion !== expected.engineVersion)
    reject("engine", `it was made by ${header.engine} ${header.engineVersion}, this is ${expected.engineVersion}`);
  if (header.lock !== expected.lock)
    reject("lock", "it was made against another engine image or package lock (run the same `wasmcell setup`)");
}

function str(v: unknown, max: number, what: string): string {
  if (typeof v !== "string" || v.length > max) reject("corrupt", `its ${what}`);
  return v as string;
}

function checkHeader(raw: unknown): SnapshotHeader {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return reject("corrupt", "its header");
  const h = raw as Record<string, unknown>;
  const engine = ENGINES.find((e): e is SnapshotEngine => e === h.engine && ENGINE_INFO[e].snapshots);
  if (!engine) return reject("engine", "it names no engine of wasmcell's whose sessions snapshot");
  if (h.language !== "python" && h.language !== "javascript" && h.language !== "typescript")
    return reject("corrupt", "its language");
  const limits: Record<string, number> = {};
  if (typeof h.limits !== "object" || h.limits === null || Object.keys(h.limits).length > 32)
    return reject("corrupt", "its limits");
  for (const [k, v] of Object.entries(h.limits)) {
    if (k.length > 64 || typeof v !== "number" || !Number.isFinite(v)) return reject("corrupt", "its limits");
    limits[k] = v;
  }
  const createdAt = h.createdAt;
  if (typeof createdAt !== "number" || !Number.isFinite(createdAt)) return reject("corrupt", "its time");
  if (h.base !== undefined && (typeof h.base !== "string" || !/^[0-9a-f]{64}$/.test(h.base)))
    return reject("corrupt", "its checkpoint");
  return {
    engine,
    language: h.language,
    engineVersion: str(h.engineVersion, 100, "engine version"),
    lock: str(h.lock, 200, "lock"),
    ...(h.base !== undefined ? { base: h.base } : {}),
    limits,
    createdAt,
  };
}
