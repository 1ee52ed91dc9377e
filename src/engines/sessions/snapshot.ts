// A session snapshot as bytes: the one room that writes and reads them. A snapshot that comes back is
// hostile input exactly like a sidecar's reply (it was stored somewhere, by someone), so reading it
// checks, in this order, before anything else looks at it: its size against the cap, its framing, its
// format, its key id, and its AEAD tag under a key derived from the host key (the guest never sees
// either); only then is it decrypted and the header parsed, each field bounded; the state inside stays
// opaque here and is checked again by the engine that loads it.
//
// Encrypted at rest (format 2): a session's state holds whatever its guest held (a token it was given,
// a file it wrote), and a store (a disk directory, Redis) is not the sandbox. Each snapshot draws a
// random 16-byte salt; HKDF-SHA256(host key, salt, "wasmcell snapshot v2") gives that snapshot's
// AES-256-GCM key and nonce, so no key and nonce pair is ever used twice whatever the number of
// snapshots. The GCM tag covers the ciphertext and, as associated data, every byte before it (magic,
// format, length, key id, salt): a changed byte anywhere is `authentication`. Format 1 (authenticated,
// not encrypted) is refused as `version`.
//
// Layout (all integers little-endian):
//   magic "WCSNAP" (6) | format u8 | reserved u8 | total length u32 | key id (8) | salt (16) | tag (16) |
//   ciphertext of ( header length u32 | header JSON | state )
// The key id (the first 8 bytes of HMAC(key, "wasmcell key id")) only tells "another key" apart from
// "changed bytes"; it says nothing of the key.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import { ENGINE_INFO, ENGINES, type EngineName, type Language } from "../../core/types.ts";

const MAGIC = Buffer.from("WCSNAP", "latin1");
export const SNAPSHOT_FORMAT = 2;
const KEY_ID = 8;
const SALT = 16;
const TAG = 16;
const AT_KEY_ID = MAGIC.length + 2 + 4;
const AT_SALT = AT_KEY_ID + KEY_ID;
const AT_TAG = AT_SALT + SALT;
/** Where the ciphertext starts: everything before it is associated data, in the clear. */
const PREFIX = AT_TAG + TAG;
const MAX_HEADER = 64 * 1024;
const INFO = Buffer.from("wasmcell snapshot v2 aes-256-gcm", "latin1");

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

/** This snapshot's AES-256-GCM key and nonce: HKDF-SHA256 of the host key under its salt. */
function cipherKey(key: Uint8Array, salt: Uint8Array): { key: Buffer; nonce: Buffer } {
  const okm = Buffer.from(hkdfSync("sha256", key, salt, INFO, 32 + 12));
  return { key: okm.subarray(0, 32), nonce: okm.subarray(32) };
}

/**
 * Frames, encrypts, authenticates and returns a snapshot. One over `maxBytes`
 * (`sessions.maxSnapshotBytes`) is never made: openSnapshot refuses it first thing, so it could only
 * be bytes that look saved and resume nowhere (an eviction would lose the session).
 * SnapshotUnsupportedError `size` instead. Every engine passes its sandbox's cap; omitted (no cap)
 * only where a test crafts a blob.
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
  keyId(key).copy(out, AT_KEY_ID);
  const salt = randomBytes(SALT);
  salt.copy(out, AT_SALT);
  const k = cipherKey(key, salt);
  const cipher = createCipheriv("aes-256-gcm", k.key, k.nonce, { authTagLength: TAG });
  cipher.setAAD(out.subarray(0, AT_TAG));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length, 0);
  // Written in place: the ciphertext is as long as the plaintext, and no clear copy of the state is made.
  let at = PREFIX;
  for (const part of [length, json, state]) {
    const enc = cipher.update(part);
    enc.copy(out, at);
    at += enc.length;
  }
  cipher.final().copy(out, at);
  cipher.getAuthTag().copy(out, AT_TAG);
  return out;
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
  // Before the key: a format this version cannot read says so, whatever key it was made under.
  const format = blob[MAGIC.length];
  if (format !== SNAPSHOT_FORMAT)
    return reject(
      "version",
      format === 1
        ? `format 1 (authenticated, not encrypted); this wasmcell reads format ${SNAPSHOT_FORMAT} (encrypted): resume it with the wasmcell that made it`
        : `format ${format}; this wasmcell reads format ${SNAPSHOT_FORMAT}`,
    );
  if (!timingSafeEqual(blob.subarray(AT_KEY_ID, AT_KEY_ID + KEY_ID), keyId(key)))
    return reject(
      "key",
      "it was made under another key: a snapshot resumes only where sessions.key is the key it was made with (the default key is random per process)",
    );
  const k = cipherKey(key, blob.subarray(AT_SALT, AT_SALT + SALT));
  const decipher = createDecipheriv("aes-256-gcm", k.key, k.nonce, { authTagLength: TAG });
  decipher.setAAD(blob.subarray(0, AT_TAG));
  decipher.setAuthTag(blob.subarray(AT_TAG, PREFIX));
  const plain = decipher.update(blob.subarray(PREFIX));
  try {
    decipher.final();
  } catch {
    // Nothing decrypted is looked at before the tag is proven.
    plain.fill(0);
    return reject("authentication", "its bytes do not match its tag: it was changed after it was made");
  }
  // Authenticated from here on: still bounded, since a host bug must not become a crash.
  const headerLength = plain.readUInt32LE(0);
  if (headerLength > MAX_HEADER || 4 + headerLength > plain.length) return reject("corrupt", "its header length");
  let raw: unknown;
  try {
    raw = JSON.parse(plain.subarray(4, 4 + headerLength).toString("utf8"));
  } catch {
    return reject("corrupt", "its header is not JSON");
  }
  const header = checkHeader(raw);
  if (expected) checkMadeFor(header, expected);
  return { header, state: plain.subarray(4 + headerLength) };
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
