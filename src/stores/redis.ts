// The SessionStore on Redis, so any replica can resume a session another one snapshotted. Blobs are
// plain keys (SET replaces atomically: a reader sees the old blob or the new one). The lock is the
// single-instance Redis lock: SET key token NX PX ttl takes it; extend and release run a Lua
// compare-and-act on the token, so a holder whose lock expired and was taken by someone else can
// neither extend nor delete the new holder's lock. Blobs are opaque here and checked by the resume
// path (store.ts); this store never trusts what it reads back.

import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { InvalidOptionError } from "../core/errors.ts";
import { loadIORedis } from "./peers.ts";
import type { SessionLock, SessionStore } from "./store.ts";

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

export interface RedisSessionStoreOptions {
  /** redis:// URL. */
  redis: string;
  /** Key prefix. @defaultValue "wasmcell:session" */
  prefix?: string;
  /** How long a blob lives after its last put, in seconds (an abandoned session expires). @defaultValue 86400 */
  ttlSeconds?: number;
}

const ID = /^[A-Za-z0-9_.:-]{1,256}$/;

export class RedisSessionStore implements SessionStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlSeconds: number;

  constructor(options: RedisSessionStoreOptions) {
    if (typeof options?.redis !== "string" || !/^rediss?:\/\//.test(options.redis))
      throw new InvalidOptionError("redis", "must be a redis:// or rediss:// URL");
    this.#ttlSeconds = options.ttlSeconds ?? 86_400;
    if (!Number.isInteger(this.#ttlSeconds) || this.#ttlSeconds < 1)
      throw new InvalidOptionError("ttlSeconds", "must be a whole number ≥ 1");
    this.#prefix = options.prefix ?? "wasmcell:session";
    // ioredis is an optional peer: loaded here, when a store is made (MissingDependencyError without it).
    const { Redis } = loadIORedis("RedisSessionStore");
    this.#redis = new Redis(options.redis, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.#redis.on("error", () => {}); // surfaced as rejected commands, not as an unhandled 'error' event
  }

  async get(id: string): Promise<Uint8Array | undefined> {
    const blob = await this.#redis.getBuffer(this.#key("blob", id));
    return blob === null ? undefined : new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
  }

  async put(id: string, blob: Uint8Array): Promise<void> {
    await this.#redis.set(
      this.#key("blob", id),
      Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength),
      "EX",
      this.#ttlSeconds,
    );
  }

  async delete(id: string): Promise<void> {
    await this.#redis.del(this.#key("blob", id));
  }

  async lock(id: string, ttlMs: number): Promise<SessionLock | undefined> {
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new InvalidOptionError("ttlMs", "must be a whole number ≥ 1");
    const key = this.#key("lock", id);
    const token = randomBytes(16).toString("hex");
    if ((await this.#redis.set(key, token, "PX", ttlMs, "NX")) !== "OK") return undefined;
    let released = false;
    return {
      extend: async (ms: number) => {
        if (released) return false;
        return (await this.#redis.eval(EXTEND, 1, key, token, String(ms))) === 1;
      },
      release: async () => {
        if (released) return;
        released = true;
        await this.#redis.eval(RELEASE, 1, key, token);
      },
    };
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  #key(kind: "blob" | "lock", id: string): string {
    if (typeof id !== "string" || !ID.test(id))
      throw new InvalidOptionError("id", "must be 1-256 letters, digits, _ . : -");
    return `${this.#prefix}:${kind}:${id}`;
  }
}
