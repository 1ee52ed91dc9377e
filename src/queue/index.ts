// `wasmcell/queue`: run requests through a BullMQ queue on Redis, on as many workers and machines as
// you start. Its own entry, so the package root loads no Redis client.
export {
  CLOSE_GRACE_MS,
  createWorker,
  LOCK_MARGIN_MS,
  type JobContext,
  type JobEvent,
  type QueueWorker,
  type WorkerOptions,
} from "./worker.ts";
export { createQueueClient, type EnqueueOptions, type QueueClient, type QueueClientOptions } from "./client.ts";
export type { TenantLimits } from "./tenants.ts";
export type { ConnectionEvent } from "./connection.ts";
export type { QueueRequest } from "./wire.ts";
export { RedisSessionStore, type RedisSessionStoreOptions } from "../stores/redis.ts";
