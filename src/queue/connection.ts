// What the worker and the client share about reaching Redis: the URL check, the queue's name and key
// prefix, and one ioredis connection built the way BullMQ requires (maxRetriesPerRequest: null).

import { Redis } from "ioredis";
import { InvalidOptionError } from "../core/errors.ts";

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

export function connect(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
}
