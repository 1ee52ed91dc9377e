// createQueueClient(): sandbox.run's shape over a queue. `run(request)` resolves to the same RunResult
// (guest failures returned, host misuse thrown as the same typed errors), from whichever worker took
// the job; `enqueue`/`result` split it for batches. Everything read back from Redis goes through
// wire.ts before the caller sees it. Completion is heard through replies.ts (one pub/sub channel per
// queue, with the job's stored state as the guarantee), not through BullMQ's QueueEvents.

import { randomUUID } from "node:crypto";
import { ClosedError, InvalidOptionError, QueueWaitError } from "../core/errors.ts";
import { LANGUAGES, type Language, type RunResult } from "../core/types.ts";
import { activeTraceparent } from "../kit/trace.ts";
import { loadBullMQ } from "../stores/peers.ts";
import { checkQueueName, checkRedisUrl, connect, DEFAULT_QUEUE, PREFIX } from "./connection.ts";
import { replyChannel, ReplyWaiters, type Outcome } from "./replies.ts";
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
  /** Ends every `run`/`result` still waiting with ClosedError, then closes the connections; later calls throw it too. */
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
  // The optional peers, loaded on first use (MissingDependencyError names the install command).
  const { Queue, Job } = loadBullMQ("wasmcell/queue");
  const queue = new Queue(name, { connection: { url }, prefix: PREFIX });
  const sub = connect(url);
  const redis = connect(url);
  for (const c of [queue, sub, redis]) c.on("error", () => {});
  const waiters = new ReplyWaiters(sub, redis, (bullId) => queue.toKey(bullId));
  await Promise.all([queue.waitUntilReady(), waiters.listen(replyChannel(PREFIX, name))]);

  let closed = false;
  const isOpen = () => {
    if (closed) throw new ClosedError("queue client");
  };
  /** Checks and encodes a request: its key (the given id or a random one), and the job's data. */
  const prepare = (request: QueueRequest, o: EnqueueOptions) => {
    isOpen();
    const id = o.id ?? randomUUID();
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(id)) throw new InvalidOptionError("id", "must be 1-128 letters, digits, _ . -");
    // The caller's active span goes with the job, so the worker's run spans join the caller's trace.
    const traceparent = request.traceparent ?? activeTraceparent();
    return { id, data: encodeJob(o.tenant ?? defaultTenant, traceparent ? { ...request, traceparent } : request) };
  };
  // attempts: 1: a worker answers a guest failure or a host error with a reply, not a throw; retries
  // happen only through stall detection (the worker died), bounded by the workers' maxStalledCount.
  const add = (id: string, data: ReturnType<typeof prepare>["data"]) =>
    queue.add("run", data, { jobId: jobId(id), attempts: 1 });
  const enqueue = async (request: QueueRequest, o: EnqueueOptions = {}): Promise<string> => {
    const { id, data } = prepare(request, o);
    await add(id, data);
    return id;
  };

  const result = async (id: string): Promise<RunResult> => {
    isOpen();
    let lang: Language = "javascript";
    // The waiter goes in first, so a reply published while the job is looked up is not missed.
    return await settle(
      id,
      () => lang,
      async () => {
        const job = await Job.fromId(queue, jobId(id));
        if (!job) throw new InvalidOptionError("id", `no job "${id}" (never enqueued, or its result has expired)`);
        lang = languageOf(job.data);
      },
    );
  };
  /**
   * Waits for `id`'s outcome. `first` runs once the waiter is in place (run's add, result's look-up),
   * so no reply can come before the waiter; `fresh` (a random id: a new job for certain) skips the
   * first read of the job's state, which a caller's key needs (it may name a job that has ended).
   */
  const settle = async (
    id: string,
    language: () => Language,
    first: () => Promise<unknown>,
    fresh = false,
  ): Promise<RunResult> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new QueueWaitError(id, waitMs)), waitMs);
    let outcome: Outcome;
    try {
      const waiting = waiters.wait(jobId(id), controller.signal, fresh);
      waiting.catch(() => {}); // awaited below; a `first` that throws must not leave it unhandled
      await first().catch((error: unknown) => {
        controller.abort(error);
        throw error;
      });
      outcome = await waiting;
    } finally {
      clearTimeout(timer);
    }
    // A failed job: its workers kept dying (stalled past maxStalledCount) or one threw unexpectedly.
    if ("failed" in outcome)
      return crashed(language(), `the job failed on the queue's workers: ${outcome.failed.slice(0, 500)}`);
    return decodeReply(outcome.reply, language());
  };

  return {
    // One round trip fewer than enqueue + result: the added job is awaited as it is.
    run: async (request, o = {}) => {
      const { id, data } = prepare(request, o);
      return await settle(
        id,
        () => request.language,
        () => add(id, data),
        o.id === undefined,
      );
    },
    enqueue,
    result,
    // Every wait still pending ends with ClosedError at once, not at its waitMs.
    close: async () => {
      closed = true;
      waiters.close();
      await Promise.allSettled([queue.close(), sub.quit(), redis.quit()]);
    },
  };
}

function languageOf(data: unknown): Language {
  const l = (data as { request?: { language?: unknown } } | null)?.request?.language;
  return LANGUAGES.find((x) => x === l) ?? "javascript";
}
