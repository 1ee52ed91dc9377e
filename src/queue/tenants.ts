// Per-tenant concurrency caps and rate limits, shared by every worker through Redis. BullMQ's own
// per-group limits are a BullMQ Pro feature (not open source), so this is the "Redis counters with Lua"
// route: one script admits a job atomically across all workers, or says how long to wait.
//
// Concurrency: a sorted set of the tenant's running attempts, each scored with its expiry. A slot's
// member is one attempt of a job (job id, worker, random), not the job id: when BullMQ's stall check
// hands a job whose lock lapsed (a renewal that came late, a paused worker) to a second worker while
// the first still runs it, the second attempt needs a slot of its own, and the first one's late
// release frees only its own slot, never the one the second attempt holds. A slot whose
// worker died (SIGKILL, a lost machine) is not released by anyone: it expires after `slotTtlMs`
// (the queue's lock duration, which every run's deadline fits inside: see worker.ts), so a dead
// worker holds a tenant's slot for at most that long and never forever. Live workers extend theirs.
// Rate: a fixed window counter per tenant (`max` admissions per `durationMs`); a job refused by either
// counter consumes neither. Time comes from the Redis server (TIME), so workers' clocks need not agree.

import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { InvalidOptionError } from "../core/errors.ts";

export interface TenantLimits {
  /** Runs of this tenant in flight at once, across every worker. */
  concurrency?: number;
  /** At most `max` runs of this tenant start per `durationMs`, across every worker. */
  rate?: { max: number; durationMs: number };
}

const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local member = ARGV[3]
local rateMax = tonumber(ARGV[4])
local rateWindow = tonumber(ARGV[5])
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= cap then
    return -1
  end
end
if rateMax > 0 then
  local used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used >= rateMax then
    local wait = redis.call('PTTL', KEYS[2])
    if wait <= 0 then wait = 1 end
    return wait
  end
  if redis.call('INCR', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], rateWindow) end
end
if cap > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, member)
  redis.call('PEXPIRE', KEYS[1], ttl * 2)
end
return 0
`;

const EXTEND = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
  return 1
end
return 0
`;

/** What an admission said: run now, or come back after `retryMs`. */
export type Admission =
  | { admitted: true; /** The slot this attempt holds, for extend() and release(). */ slot: string }
  | { admitted: false; retryMs: number; reason: "concurrency" | "rate" };

export class TenantGate {
  readonly #redis: Redis;
  readonly #limits: ReadonlyMap<string, TenantLimits>;
  readonly #prefix: string;
  readonly #slotTtlMs: number;
  readonly #owner: string;

  /** `owner` (the worker's id) is written into each slot's member, so a slot says whose it is. */
  constructor(redis: Redis, limits: Record<string, TenantLimits>, prefix: string, slotTtlMs: number, owner = "") {
    for (const [tenant, l] of Object.entries(limits)) checkLimits(tenant, l);
    this.#redis = redis;
    this.#limits = new Map(Object.entries(limits));
    this.#prefix = prefix;
    this.#slotTtlMs = slotTtlMs;
    this.#owner = owner;
  }

  limited(tenant: string): boolean {
    return this.#limits.has(tenant);
  }

  /** One attempt of `jobId` asks to run; a second attempt of the same job is counted like any other. */
  async admit(tenant: string, jobId: string): Promise<Admission> {
    const l = this.#limits.get(tenant);
    if (!l) return { admitted: true, slot: "" };
    const slot = `${jobId}|${this.#owner}|${randomUUID()}`;
    const wait = (await this.#redis.eval(
      ADMIT,
      2,
      this.#slots(tenant),
      `${this.#prefix}:tenant:${tenant}:rate`,
      String(l.concurrency ?? 0),
      String(this.#slotTtlMs),
      slot,
      String(l.rate?.max ?? 0),
      String(l.rate?.durationMs ?? 0),
    )) as number;
    if (wait === 0) return { admitted: true, slot };
    // A concurrency refusal has no known end: poll soon, with jitter so workers do not retry in step.
    if (wait === -1) return { admitted: false, reason: "concurrency", retryMs: 20 + Math.floor(Math.random() * 30) };
    return { admitted: false, reason: "rate", retryMs: wait };
  }

  /** Keeps a running attempt's slot alive; false when it was lost (expired, or never held). */
  async extend(tenant: string, slot: string): Promise<boolean> {
    if (!this.#limits.get(tenant)?.concurrency) return true;
    return (await this.#redis.eval(EXTEND, 1, this.#slots(tenant), String(this.#slotTtlMs), slot)) === 1;
  }

  /** Frees this attempt's slot only (another attempt of the same job keeps its own). */
  async release(tenant: string, slot: string): Promise<void> {
    if (!this.#limits.get(tenant)?.concurrency) return;
    await this.#redis.zrem(this.#slots(tenant), slot);
  }

  #slots(tenant: string): string {
    return `${this.#prefix}:tenant:${tenant}:running`;
  }
}

function checkLimits(tenant: string, l: TenantLimits): void {
  const field = `tenants.${tenant}`;
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(tenant))
    throw new InvalidOptionError("tenants", `"${tenant}" is not a tenant name`);
  if (l.concurrency !== undefined && !(Number.isInteger(l.concurrency) && l.concurrency >= 1))
    throw new InvalidOptionError(`${field}.concurrency`, "must be a whole number ≥ 1");
  if (l.rate !== undefined) {
    const { max, durationMs } = l.rate;
    if (!(Number.isInteger(max) && max >= 1))
      throw new InvalidOptionError(`${field}.rate.max`, "must be a whole number ≥ 1");
    if (!(Number.isInteger(durationMs) && durationMs >= 1))
      throw new InvalidOptionError(`${field}.rate.durationMs`, "must be a whole number ≥ 1");
  }
}
