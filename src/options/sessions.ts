// `sessions`: how stateful sessions are snapshotted, authenticated, evicted and stored. The option,
// its default, its schema, and what it resolves to, side by side.

import { z } from "zod";
import type { SessionStore } from "../stores/store.ts";
import type { AsParsed, Same } from "./zod.ts";

export interface SessionsOptions {
  /**
   * The host key snapshots are encrypted and authenticated under (AES-256-GCM, each snapshot with its
   * own key and nonce HKDF-SHA256 derives from this key and a random salt): at least 32 bytes, or a
   * string of at least 32 characters. Never reaches guest code. The default is a random key made per process, so a
   * snapshot resumes only in the process that took it: a snapshot meant to cross processes or machines
   * (a store on disk that survives a restart, replicas) needs a configured key shared by them.
   * @defaultValue a random per-process key
   */
  key?: Uint8Array | string;
  /**
   * The largest snapshot `resume` accepts, in bytes (compressed, as `snapshot()` returns it).
   * @defaultValue 64 MiB
   */
  maxSnapshotBytes?: number;
  /**
   * A session with no run for this long is snapshotted into the store and gives its sidecar back to
   * the pool; its next run resumes it. `false`: only when another run needs the sidecar.
   * @defaultValue 30000
   */
  idleMs?: number | false;
  /**
   * Where evicted sessions wait (src/stores/store.ts): MemorySessionStore by default; a
   * DiskSessionStore (with a configured `key`) lets sessions outlive the process.
   * @defaultValue a MemorySessionStore
   */
  store?: SessionStore;
}

export const DEFAULT_SESSIONS = Object.freeze({ maxSnapshotBytes: 64 * 1024 * 1024, idleMs: 30_000 });

export interface ResolvedSessions {
  key: Uint8Array;
  /** Whether the caller gave the key (a snapshot can cross processes only then). */
  keyGiven: boolean;
  maxSnapshotBytes: number;
  idleMs: number | false;
  /** Undefined: the engine makes a MemorySessionStore. */
  store: SessionStore | undefined;
}

/**
 * One random key per process: snapshots of one process resume in that process only. Web Crypto, not
 * node:crypto: the options load on edge runtimes too. Made on first use, never at module load:
 * Workers refuse random values (and timers, and I/O) in the global scope, so a key made at import
 * failed every Worker that imported wasmcell.
 */
let processKey: Uint8Array | undefined;
const PROCESS_KEY = (): Uint8Array => (processKey ??= globalThis.crypto.getRandomValues(new Uint8Array(32)));

export function resolveSessions(o: SessionsOptions | undefined): ResolvedSessions {
  const given = o?.key;
  const key =
    given === undefined
      ? PROCESS_KEY()
      : typeof given === "string"
        ? new TextEncoder().encode(given)
        : Uint8Array.from(given);
  return {
    key,
    keyGiven: o?.key !== undefined,
    maxSnapshotBytes: o?.maxSnapshotBytes ?? DEFAULT_SESSIONS.maxSnapshotBytes,
    idleMs: o?.idleMs ?? DEFAULT_SESSIONS.idleMs,
    store: o?.store,
  };
}

const isStore = (v: unknown): v is SessionStore =>
  typeof v === "object" &&
  v !== null &&
  ["get", "put", "delete", "lock", "close"].every((k) => typeof (v as Record<string, unknown>)[k] === "function");

export const sessionsSchema = z
  .object({
    key: z.union([
      z.custom<Uint8Array>((k) => k instanceof Uint8Array && k.length >= 32, "must be at least 32 bytes"),
      z.string().min(32, "must be at least 32 characters"),
    ]),
    maxSnapshotBytes: z
      .number()
      .int()
      .min(1024)
      .max(2 ** 32),
    idleMs: z.union([
      z
        .number()
        .int()
        .min(1)
        .max(2 ** 31),
      z.literal(false),
    ]),
    store: z.custom<SessionStore>(isStore, "must implement get, put, delete, lock and close"),
  })
  .partial()
  .strict();

/** The schema and `SessionsOptions` name the same fields with the same types (checked when compiling). */
export const sessionsTied: Same<z.infer<typeof sessionsSchema>, AsParsed<SessionsOptions>> = true;
