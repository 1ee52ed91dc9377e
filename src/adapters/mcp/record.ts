// The record a stored MCP session is kept as, and its one parser. Comes back from a store, so it is
// untrusted: every field is checked here, and the snapshot inside is authenticated by sandbox.resume.
//
//   "WCMR" | version 1 | kind | generation (16 bytes) | body
//   kind 1 "snapshot": body = the session's snapshot (session.snapshot() bytes, at least one byte)
//   kind 2 "pinned":   body = the 16-byte id of the server process that holds the session live,
//                      because its state cannot be snapshotted (SnapshotUnsupportedError)
//
// The generation is new on every save: a server that holds a session live reuses it only while the
// stored generation is the one it saved, so a run another replica did since is never missed. It is not
// authenticated — whoever can write the store can already put back any older snapshot — so a forged
// generation can at most make a server keep a state this session really had.

import { InvalidOptionError, SnapshotRejectedError } from "../../core/errors.ts";

const MAGIC = [0x57, 0x43, 0x4d, 0x52]; // "WCMR"
const VERSION = 1;
const HEADER = 4 + 1 + 1 + 16;
const ID_BYTES = 16;

export type StoredSession =
  | { kind: "snapshot"; generation: string; snapshot: Uint8Array }
  | { kind: "pinned"; generation: string; owner: string };

export function encodeRecord(record: StoredSession): Uint8Array {
  const body = record.kind === "snapshot" ? record.snapshot : fromHex(record.owner, "owner");
  const out = new Uint8Array(HEADER + body.length);
  out.set(MAGIC, 0);
  out[4] = VERSION;
  out[5] = record.kind === "snapshot" ? 1 : 2;
  out.set(fromHex(record.generation, "generation"), 6);
  out.set(body, HEADER);
  return out;
}

/** The record in `bytes`, or a SnapshotRejectedError("corrupt" / "version") naming what is wrong. */
export function decodeRecord(bytes: Uint8Array): StoredSession {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER || MAGIC.some((b, i) => bytes[i] !== b))
    throw new SnapshotRejectedError("corrupt", "the stored session is not a wasmcell MCP session record");
  if (bytes[4] !== VERSION)
    throw new SnapshotRejectedError(
      "version",
      `the stored session record is version ${bytes[4]}, this server reads ${VERSION}`,
    );
  const generation = toHex(bytes.subarray(6, HEADER));
  const body = bytes.subarray(HEADER);
  if (bytes[5] === 1 && body.length > 0) return { kind: "snapshot", generation, snapshot: body };
  if (bytes[5] === 2 && body.length === ID_BYTES) return { kind: "pinned", generation, owner: toHex(body) };
  throw new SnapshotRejectedError("corrupt", `the stored session record's kind (${bytes[5]}) or length does not hold`);
}

/** A random 16-byte id as hex: a new generation, or a server process's id. */
export function newId(): string {
  return toHex(globalThis.crypto.getRandomValues(new Uint8Array(ID_BYTES)));
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromHex(hex: string, what: string): Uint8Array {
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new InvalidOptionError(what, "must be 32 lowercase hex digits");
  return Uint8Array.from({ length: ID_BYTES }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
}
