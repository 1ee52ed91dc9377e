// What the worker and the client share about reaching Redis: the URL check, the queue's name and key
// prefix, one ioredis connection built the way BullMQ requires (maxRetriesPerRequest: null) that can
// end itself and its duplicates in any state, and the watch that turns connection errors into two
// events (lost, restored) instead of a stack trace per reconnect attempt.

import type { EventEmitter } from "node:events";
import type { Redis, RedisOptions } from "ioredis";
import { InvalidOptionError } from "../core/errors.ts";
import { loadIORedis, QUEUE_PEERS } from "../stores/peers.ts";

export const DEFAULT_QUEUE = "wasmcell-runs";
/** BullMQ's key prefix, so wasmcell's keys stand apart from other users of the same Redis. */
export const PREFIX = "wasmcell";

export function checkRedisUrl(url: unknown, field = "redis"): string {
  if (typeof url !== "string") throw new InvalidOptionError(field, "must be a redis:// or rediss:// URL");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidOptionError(field, `"${url}" is not a URL (redis://host:6379)`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
    throw new InvalidOptionError(field, `must be a redis:// or rediss:// URL, not ${parsed.protocol}`);
  return url;
}

export function checkQueueName(name: unknown): string {
  if (typeof name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(name))
    throw new InvalidOptionError("queue", "must be 1-64 letters, digits, _ . -");
  return name;
}

/**
 * An ioredis connection (built the way BullMQ requires: maxRetriesPerRequest null) that keeps the
 * connections duplicated from it — BullMQ makes a worker's blocking connection that way — so its
 * owner can end all of them at once, whatever state each is in.
 */
export interface RedisConnections extends Redis {
  /** Ends this connection and its duplicates now: every command waiting on one of them fails. */
  endAll(): void;
}

/** The class behind RedisConnections, made once ioredis is loaded (the first connect). */
let Connections: (new (url: string, options: RedisOptions) => RedisConnections) | undefined;

/** A connection for `feature` (the queue's client or worker); MissingDependencyError without ioredis. */
export function connect(url: string, feature = "wasmcell/queue"): RedisConnections {
  Connections ??= connectionsClass(loadIORedis(feature, QUEUE_PEERS).Redis);
  return new Connections(url, { maxRetriesPerRequest: null, lazyConnect: false });
}

function connectionsClass(Base: typeof Redis): new (url: string, options: RedisOptions) => RedisConnections {
  return class extends Base implements RedisConnections {
    readonly #duplicates: Redis[] = [];

    override duplicate(override?: Partial<RedisOptions>): Redis {
      const copy = super.duplicate(override);
      this.#duplicates.push(copy);
      return copy;
    }

    endAll(): void {
      for (const connection of [this, ...this.#duplicates]) endNow(connection);
    }
  };
}

/**
 * Between two reconnect attempts ioredis's disconnect() only cancels the next attempt: the
 * connection never ends, and what waits on it (its queued commands, BullMQ waiting for its 'end')
 * waits forever. Starting an attempt and dropping it at once ends it in every state.
 */
function endNow(connection: Redis): void {
  if (connection.status === "end") return;
  if (connection.status === "reconnecting") connection.connect().catch(() => {});
  connection.disconnect();
}

/** The connection to Redis was lost (once, until it is back) or is back. */
export type ConnectionEvent = { state: "lost"; reason: string } | { state: "restored" };

/** Error codes of a connection that is down; other errors are not about reaching Redis. */
const DOWN = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EPIPE"]);

/**
 * Listens for 'error' on every emitter that talks to Redis (ioredis prints a stack trace for each
 * reconnect attempt when nothing listens; BullMQ's Queue prints each one too) and reports one "lost"
 * until `ready` (an ioredis connection of the same Redis) is ready again, then one "restored". The
 * reconnect attempts go on meanwhile, with ioredis's backoff (50 ms more each time, up to 2 s).
 * Errors that are not about reaching Redis are left to the caller.
 */
export function watchConnection(
  emitters: EventEmitter[],
  ready: Redis,
  report: (event: ConnectionEvent) => void,
): { stop(): void } {
  let reachable = true;
  let stopped = false;
  const onError = (error: unknown) => {
    const code = (error as { code?: unknown } | undefined)?.code;
    if (stopped || !reachable || typeof code !== "string" || !DOWN.has(code)) return;
    reachable = false;
    report({ state: "lost", reason: error instanceof Error ? error.message : String(error) });
  };
  const onReady = () => {
    if (stopped || reachable) return;
    reachable = true;
    report({ state: "restored" });
  };
  for (const emitter of emitters) emitter.on("error", onError);
  ready.on("ready", onReady);
  return {
    stop: () => {
      stopped = true;
    },
  };
}
