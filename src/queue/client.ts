// createQueueClient(): sandbox.run's shape over a queue. `run(request)` resolves to the same RunResult
// (guest failures returned, host misuse thrown as the same typed errors), from whichever worker took
// the job; `enqueue`/`result` split it for batches. Everything read back from Redis goes through
// wire.ts before the caller sees it.

import { randomUUID } from "node:crypto";
import { Queue, QueueEvents, Job } from "bullmq";
import { InvalidOptionError, QueueWaitError } from "../errors.ts";
import { LANGUAGES, type Language, type RunResult } from "../types.ts";
import { checkQueueName, checkRedisUrl, DEFAULT_QUEUE, PREFIX } from "./connection.ts";
import { crashed, decodeReply, encodeJob, tenantSchema, type QueueRequest } from "./wire.ts";

export interface QueueClientOptions {
  /** redis:// URL of the Redis the workers consume from. */
  redis: string;
  /** @defaultValue "wasmcell-runs" */
  queue?: string;
  /** The tenant runs are counted against when a call names none. @defaultValue "default" */
  tenant?: string;
  /** How long `run` and `result` wait for a worker's answer before throwing QueueWaitError. @defaultValue 600000 */
  waitMs?: number;
}

export interface EnqueueOptions {
  /**
   * The idempotency key: the job's id. Enqueueing an id that is already queued, running or kept as a
   * result adds nothing, so a client that retries after a lost reply does not run the request twice.
   * 1-128 letters, digits, _ . -; a random one when omitted.
   */
  id?: string;
  tenant?: string;
}

export interface QueueClient {
  run(request: QueueRequest, options?: EnqueueOptions): Promise<RunResult>;
  /** Adds the request and resolves to its id once Redis has it. */
  enqueue(request: QueueRequest, options?: EnqueueOptions): Promise<string>;
  /** Waits for the result of an enqueued id (at most `waitMs`). */
  result(id: string): Promise<RunResult>;
  close(): Promise<void>;
}

/** Job ids are prefixed: BullMQ reserves all-digit ids for its own counter. */
const jobId = (id: string) => `r.${id}`;

export async function createQueueClient(options: QueueClientOptions): Promise<QueueClient> {
  if (typeof options !== "object" || options === null) throw new InvalidOptionError("options", "must be an object");
  const url = checkRedisUrl(options.redis);
  const name = checkQueueName(options.queue ?? DEFAULT_QUEUE);
  const defaultTenant = options.tenant ?? "default";
  if (!tenantSchema.safeParse(defaultTenant).success)
    throw new InvalidOptionError("tenant", "must be 1-128 letters, digits, _ . -");
  const waitMs = options.waitMs ?? 600_000;
  if (!Number.isInteger(waitMs) || waitMs < 1) throw new InvalidOptionError("waitMs", "must be a whole number ≥ 1");
  const queue = new Queue(name, { connection: { url }, prefix: PREFIX });
  const events = new QueueEvents(name, { connection: { url }, prefix: PREFIX });
  queue.on("error", () => {});
  events.on("error", () => {});
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);

  // Every waiting call listens on these two; a batch of thousands is expected, not a leak.
  queue.setMaxListeners(0);
  events.setMaxListeners(0);

  const add = async (request: QueueRequest, o: EnqueueOptions = {}): Promise<Job> => {
    const id = o.id ?? randomUUID();
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(id)) throw new InvalidOptionError("id", "must be 1-128 letters, digits, _ . -");
    const data = encodeJob(o.tenant ?? defaultTenant, request);
    // attempts: 1: a worker answers a guest failure or a host error with a reply, not a throw; retries
    // happen only through stall detection (the worker died), bounded by the workers' maxStalledCount.
    return await queue.add("run", data, { jobId: jobId(id), attempts: 1 });
  };
  const enqueue = async (request: QueueRequest, o: EnqueueOptions = {}): Promise<string> => {
    const job = await add(request, o);
    return (job.id ?? "").replace(/^r\./, "");
  };

  const result = async (id: string): Promise<RunResult> => {
    const job = await Job.fromId(queue, jobId(id));
    if (!job) throw new InvalidOptionError("id", `no job "${id}" (never enqueued, or its result has expired)`);
    return await settle(job, id, languageOf(job.data));
  };
  const settle = async (job: Job, id: string, lang: Language): Promise<RunResult> => {
    let reply: unknown;
    try {
      reply = await job.waitUntilFinished(events, waitMs);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/timed out before finishing/i.test(message)) throw new QueueWaitError(id, waitMs);
      // A failed job: its workers kept dying (stalled past maxStalledCount) or one threw unexpectedly.
      return crashed(lang, `the job failed on the queue's workers: ${message.slice(0, 500)}`);
    }
    return decodeReply(reply, lang);
  };

  return {
    // One round trip fewer than enqueue + result: the added job is awaited as it is.
    run: async (request, o) => {
      const job = await add(request, o);
      return await settle(job, (job.id ?? "").replace(/^r\./, ""), request.language);
    },
    enqueue,
    result,
    close: async () => {
      await Promise.allSettled([events.close(), queue.close()]);
    },
  };
}

function languageOf(data: unknown): Language {
  const l = (data as { request?: { language?: unknown } } | null)?.request?.language;
  return LANGUAGES.find((x) => x === l) ?? "javascript";
}
