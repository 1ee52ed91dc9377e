// createWorker(): takes run requests off a BullMQ queue, runs them in the local sandbox, stores the
// reply as the job's return value. At-least-once: a job whose worker dies (SIGKILL, a lost machine)
// keeps its lock only until `lockDurationMs`; BullMQ's stalled-job check then moves it back to the
// queue and another worker runs it again (up to `maxStalledCount` times, then it fails as `crashed`).
// docs/queue.md says what that means for side effects.
//
// A job comes from whoever can write to the queue, not from the operator: it is run as
// requestWithin (options/ceilings.ts) makes it, so the worker's limits are ceilings a job may only
// lower (unless the operator raises them with `maxLimits`) and its Python engine is the sandbox's
// (unless the operator offers more with `pythonEngines`).
//
// Deadlines: the longest deadline a job may ask for, plus the margin the engines take past it, must
// fit inside the lock duration (checked here at start-up). So by the time a job's lock has run out and
// a second worker takes it, a first run that is somehow still alive has passed its deadline and been
// ended: two runs of one job never overlap in time.
//
// Redis going away is an event, not a crash: the connections retry with backoff, `onConnection`
// hears "lost" once and "restored" once, and close() ends within a bound whatever Redis does: the
// runs in flight end by their deadlines, then Redis gets CLOSE_GRACE_MS to take what is left, then
// every connection is ended (and BullMQ gets CLOSE_GRACE_MS more to notice).

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Job } from "bullmq";
import { InvalidOptionError, WasmcellError } from "../core/errors.ts";
import { createSandbox } from "../index.ts";
import { makeOffer, requestWithin, type SandboxOptions } from "../options/index.ts";
import type { Sandbox } from "../sandbox.ts";
import type { HostFunction, Limits, PythonEngine, RunRequest } from "../core/types.ts";
import {
  checkQueueName,
  checkRedisUrl,
  connect,
  DEFAULT_QUEUE,
  PREFIX,
  watchConnection,
  type ConnectionEvent,
} from "./connection.ts";
import { GRACE } from "../kit/deadline.ts";
import { loadBullMQ } from "../stores/peers.ts";
import { WorkerMetrics } from "./metrics.ts";
import { replyChannel, replyMessage } from "./replies.ts";
import { TenantGate, type TenantLimits } from "./tenants.ts";
import { decodeJob, hostReply, resultReply, type Reply } from "./wire.ts";

/** Writing a reply to Redis and releasing the job, once its run has ended. */
const REPLY_MS = 1_000;

/**
 * What a run may take past its deadline before the worker is done with the job: the longest of the
 * engines' kill graces (kit/deadline.ts GRACE: a starved thread, a sidecar) and writing the reply.
 */
export const LOCK_MARGIN_MS = Math.max(GRACE.threadStarvedMaxMs, GRACE.sidecarKillMs) + REPLY_MS;

/**
 * What close() gives Redis, once the runs in flight have ended, to take the last results and tenant
 * releases and close the connections; past it they are dropped (a result not stored by then is run
 * again elsewhere: at-least-once). Without it a worker whose Redis is gone never exits: each close
 * waits on a command queued for a connection that does not come back.
 */
export const CLOSE_GRACE_MS = 3_000;

export interface JobContext {
  /** The job's id: the request's idempotency key when the client gave one. Stable across retries. */
  id: string;
  tenant: string;
  /** 1 on the first run; higher when an earlier worker died holding the job. */
  attempt: number;
}

/** What the worker reports about each run it starts and ends (its own counters, for tests and logs). */
export interface JobEvent {
  type: "start" | "end";
  id: string;
  tenant: string;
  worker: string;
  /** Epoch milliseconds, fractional (performance.timeOrigin + performance.now()). */
  at: number;
}

export interface WorkerOptions {
  /** redis:// URL of the Redis every worker and client share. */
  redis: string;
  /** The queue's name. @defaultValue "wasmcell-runs" */
  queue?: string;
  /** The sandbox runs go to: one you made, or options for one the worker makes (and closes). */
  sandbox?: Sandbox | SandboxOptions;
  /** Jobs in flight on this worker. @defaultValue javascript.maxWorkers + min(javascript.maxParked, 1,000) + python.pool: every engine slot busy, and room for jobs that wait on a host function or a timer (parked, no thread) */
  concurrency?: number;
  /** How long a job's lock lasts without renewal; a dead worker's jobs wait this long. @defaultValue 60000 */
  lockDurationMs?: number;
  /** How often this worker looks for stalled jobs. @defaultValue 30000 (BullMQ's) or lockDurationMs / 2, the smaller */
  stalledIntervalMs?: number;
  /** How often one job may be taken back from a dead worker before it fails as `crashed`. @defaultValue 2 */
  maxStalledCount?: number;
  /**
   * The most a job may ask for, field by field, where the operator lets jobs ask for more than the
   * sandbox's limits (which are what a job that asks for nothing gets). A job over a ceiling is refused
   * with INVALID_OPTION naming the field; the longest deadline must fit the lock (`lockDurationMs`).
   * @defaultValue the sandbox's limits: a job may lower any of them and raise none
   */
  maxLimits?: Partial<Limits>;
  /**
   * The Python engines a job may name; a job naming none runs on the sandbox's `python.engine`, which
   * must be listed. Any other is refused with INVALID_OPTION.
   * @defaultValue the sandbox's `python.engine` only
   */
  pythonEngines?: readonly PythonEngine[];
  /** Caps and rate limits per tenant, across every worker (give every worker the same table). */
  tenants?: Record<string, TenantLimits>;
  /** Host functions for one job, given its id (the idempotency key a side effect should dedupe on). */
  hostFunctions?: (job: JobContext) => Record<string, HostFunction>;
  /** This worker's name in replies and events. @defaultValue hostname:pid:random */
  id?: string;
  onJob?: (event: JobEvent) => void;
  /** Completed jobs (their replies) are kept this long for `client.result(id)`. @defaultValue 3600 */
  keepResultsSeconds?: number;
  /** Told once when the connection to Redis is lost (the worker keeps retrying) and once when it is back. */
  onConnection?: (event: ConnectionEvent) => void;
}

export interface QueueWorker {
  readonly id: string;
  readonly concurrency: number;
  /** Prometheus text: this worker's counters and the queue's depth. */
  metrics(): Promise<string>;
  /** Graceful drain: take no new job, finish the ones in flight, close the sandbox if the worker made it. */
  close(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();

export async function createWorker(options: WorkerOptions): Promise<QueueWorker> {
  if (typeof options !== "object" || options === null) throw new InvalidOptionError("options", "must be an object");
  const url = checkRedisUrl(options.redis);
  const queueName = checkQueueName(options.queue ?? DEFAULT_QUEUE);
  const lockDurationMs = positive(options.lockDurationMs ?? 60_000, "lockDurationMs");
  const stalledIntervalMs = positive(
    options.stalledIntervalMs ?? Math.min(30_000, lockDurationMs / 2),
    "stalledIntervalMs",
  );
  const maxStalledCount = positive(options.maxStalledCount ?? 2, "maxStalledCount");
  const maxTimeoutMs = lockDurationMs - LOCK_MARGIN_MS;
  // The optional peers, loaded on first use and before a sandbox starts (MissingDependencyError names
  // the install command).
  const { DelayedError, Queue, Worker } = loadBullMQ("wasmcell/queue");

  const owned = !isSandbox(options.sandbox);
  const sandbox = isSandbox(options.sandbox) ? options.sandbox : await createSandbox(options.sandbox);
  let offer: ReturnType<typeof makeOffer>;
  try {
    offer = makeOffer({ sandbox: sandbox.options, maxLimits: options.maxLimits, pythonEngines: options.pythonEngines });
    const longest = offer.ceilings.timeoutMs;
    const which = options.maxLimits?.timeoutMs !== undefined ? "maxLimits.timeoutMs" : "limits.timeoutMs";
    if (longest > maxTimeoutMs)
      throw new InvalidOptionError(
        "lockDurationMs",
        `${lockDurationMs} ms does not fit the longest run deadline a job may ask for (${which} ${longest} ms) plus ${LOCK_MARGIN_MS} ms of margin: raise lockDurationMs to at least ${longest + LOCK_MARGIN_MS} or lower ${which}`,
      );
  } catch (error) {
    if (owned) await sandbox.close();
    throw error;
  }
  const concurrency = positive(
    options.concurrency ??
      sandbox.options.javascript.maxWorkers +
        Math.min(sandbox.options.javascript.maxParked, 1_000) +
        sandbox.options.python.pool,
    "concurrency",
  );
  const id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // One connection for BullMQ's queue and worker and for this file's own commands (BullMQ adds the
  // worker's blocking connection, duplicated from it): close() can then end every one of them.
  const redis = connect(url);
  const gate = new TenantGate(redis, options.tenants ?? {}, `${PREFIX}:${queueName}`, lockDurationMs, id);
  const metrics = new WorkerMetrics();
  const queue = new Queue(queueName, { connection: redis, prefix: PREFIX });
  let draining = false;
  /** The runs in progress: close() waits for these (each ends by its deadline), not for Redis. */
  const runs = new Set<Promise<unknown>>();

  // The fast path to a waiting client (replies.ts): each reply is published the moment it exists,
  // before BullMQ stores it and before the run's tenant slot is released (a round trip the client
  // need not wait for); a reply too large for a message is announced once it is stored. A message
  // lost on the way costs a client latency, never the result (it reads the stored state).
  const channel = replyChannel(PREFIX, queueName);
  const announce = (message: string) => void redis.publish(channel, message).catch(() => {});
  // Replies announced once stored, by identity: the entry goes with the reply object, so a job whose
  // completion never lands (its lock lost, Redis gone) leaves nothing behind.
  const oversized = new WeakSet<Reply>();
  const send = (job: Job, reply: Reply): Reply => {
    const message = replyMessage(job.id ?? "", reply);
    if (message !== undefined) announce(message);
    else oversized.add(reply);
    return reply;
  };

  const processJob = async (job: Job, token?: string): Promise<Reply> => {
    if (draining) {
      // Fetched as the drain began: back to the queue for another worker, not a run close() must wait for.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    const jobId = job.id ?? "";
    metrics.wait.observe(Math.max(0, (job.processedOn ?? Date.now()) - job.timestamp) / 1000);
    let tenant: string;
    let request: RunRequest;
    try {
      const decoded = decodeJob(job.data);
      tenant = decoded.tenant;
      // Before admission: a job asking past the offer takes no tenant slot.
      request = requestWithin(decoded.request, offer);
    } catch (error) {
      metrics.job("host");
      if (error instanceof WasmcellError) return send(job, hostReply(id, error));
      throw error;
    }
    const limited = gate.limited(tenant);
    // No round trip for a tenant without limits: nothing to admit it against.
    const admission = limited ? await gate.admit(tenant, jobId) : ({ admitted: true, slot: "" } as const);
    if (!admission.admitted) {
      // Back to the delayed set without counting an attempt: another worker (or this one) takes it later.
      metrics.job(`deferred_${admission.reason}`);
      await job.moveToDelayed(Date.now() + admission.retryMs, token);
      throw new DelayedError();
    }
    const { slot } = admission;
    const keep = limited
      ? setInterval(() => void gate.extend(tenant, slot).catch(() => {}), lockDurationMs / 3)
      : undefined;
    const started = now();
    metrics.active++;
    if (limited) metrics.tenant(tenant, +1);
    options.onJob?.({ type: "start", id: jobId, tenant, worker: id, at: started });
    try {
      const context: JobContext = { id: jobId, tenant, attempt: job.attemptsStarted };
      const hostFunctions = options.hostFunctions?.(context);
      const run = sandbox.run({ ...request, ...(hostFunctions ? { hostFunctions } : {}) });
      runs.add(run);
      const result = await run.finally(() => runs.delete(run));
      metrics.job(result.ok ? "ok" : result.error.kind);
      return send(job, resultReply(id, result));
    } catch (error) {
      if (!(error instanceof WasmcellError)) throw error;
      metrics.job("host");
      return send(job, hostReply(id, error));
    } finally {
      options.onJob?.({ type: "end", id: jobId, tenant, worker: id, at: now() });
      metrics.active--;
      if (limited) metrics.tenant(tenant, -1);
      metrics.run.observe((now() - started) / 1000);
      clearInterval(keep);
      // After the reply went out: the run has ended, so holding the slot one round trip longer only
      // errs on the side of the cap.
      if (limited) await gate.release(tenant, slot).catch(() => {});
    }
  };

  const worker = new Worker(queueName, processJob, {
    connection: redis,
    prefix: PREFIX,
    concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: stalledIntervalMs,
    maxStalledCount,
    removeOnComplete: { age: options.keepResultsSeconds ?? 3600, count: 100_000 },
    removeOnFail: { age: options.keepResultsSeconds ?? 3600, count: 100_000 },
    name: id,
  });
  // BullMQ reports connection trouble here; without a listener an 'error' event would crash the process.
  worker.on("error", () => {});
  const watch = watchConnection([redis, queue, worker], redis, (event) => options.onConnection?.(event));
  const notice = (job: Job | undefined) => {
    if (job?.id !== undefined) announce(JSON.stringify({ id: job.id }));
  };
  worker.on("completed", (job: Job, reply: Reply) => oversized.has(reply) && notice(job));
  worker.on("failed", (job: Job | undefined) => job?.failedReason && notice(job));
  await worker.waitUntilReady();

  let closing: Promise<void> | undefined;
  return {
    id,
    concurrency,
    metrics: async () => {
      const counts = await queue.getJobCounts("waiting", "active", "delayed", "completed", "failed", "prioritized");
      return metrics.render(counts, draining);
    },
    close: () =>
      (closing ??= (async () => {
        draining = true;
        const stopped = worker.close(); // takes no new job; settles once BullMQ is done with Redis
        while (runs.size > 0) await Promise.allSettled([...runs]);
        const polite = Promise.allSettled([stopped, queue.close()]).then(() => redis.quit().catch(() => {}));
        if (!(await settlesWithin(polite, CLOSE_GRACE_MS))) {
          // Redis is not answering: end every connection, which fails what waits on them, and
          // BullMQ finishes closing.
          watch.stop();
          redis.endAll();
          await settlesWithin(polite, CLOSE_GRACE_MS);
        }
        if (owned) await sandbox.close();
      })()),
  };
}

/** Whether `promise` settles (either way) within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    late,
  ]);
  clearTimeout(timer);
  return settled;
}

function isSandbox(s: WorkerOptions["sandbox"]): s is Sandbox {
  return typeof s === "object" && s !== null && typeof (s as Sandbox).run === "function";
}

function positive(n: number, field: string): number {
  if (!Number.isInteger(n) || n < 1) throw new InvalidOptionError(field, "must be a whole number ≥ 1");
  return n;
}
