// How a client learns that a job is done, without BullMQ's QueueEvents. QueueEvents reads the queue's
// whole event stream (added, waiting, active, completed: three to four wake-ups of the client per job)
// and waitUntilFinished adds a state check per job; the reply itself only arrives after the worker's
// moveToFinished. Here a worker publishes its reply on one channel per queue as soon as the run has
// ended, before BullMQ stores it, and each client subscribes once to that channel.
//
// Pub/sub is only the fast path: a message can be missed (a reconnect, a waiter registered after the
// publish) and a job can end without any worker publishing (failed by another worker's stall check).
// So every waiter also reads the job's stored state once when it starts waiting, and a sweep re-reads
// the state of the jobs not read for SWEEP_MS each SWEEP_MS (at most SWEEP_MAX a sweep, the least
// recently read first): the stored state is the guarantee; pub/sub only makes it fast. A lost
// subscription (a reconnect) is the one time many messages can be missed at once, so once the
// subscriber is back every pending job's state is read right away rather than left to the sweep.
// close() ends every pending wait with ClosedError: nothing is left hanging until its waitMs.
// Everything read here is untrusted and goes through wire.ts's decodeReply before a caller sees it.

import type { Redis } from "ioredis";
import { ClosedError } from "../core/errors.ts";

/** Replies up to this many characters travel in the message; larger ones are read from the job. */
export const INLINE_MAX = 256 << 10;
const SWEEP_MS = 1_000;
/** Jobs read per sweep at most (the least recently read first), so a huge batch costs a bounded read. */
const SWEEP_MAX = 5_000;

export const replyChannel = (prefix: string, queue: string) => `${prefix}:${queue}:replies`;

/** The message a worker publishes: the job's id and, when it is small enough, its reply. */
export function replyMessage(jobId: string, reply: unknown): string | undefined {
  const text = JSON.stringify({ id: jobId, reply });
  return text.length <= INLINE_MAX ? text : undefined;
}

/** What a waiter learns: the worker's reply (still to be checked), or that the job failed. */
export type Outcome = { reply: unknown } | { failed: string };

interface Waiter {
  deliver: (o: Outcome) => void;
  fail: (error: Error) => void;
}

export class ReplyWaiters {
  readonly #sub: Redis;
  readonly #redis: Redis;
  readonly #jobKey: (id: string) => string;
  readonly #waiting = new Map<string, Set<Waiter>>();
  /** When each waited-for job's state was last read (or its first waiter came). */
  readonly #read = new Map<string, number>();
  readonly #sweep: NodeJS.Timeout;
  #channel: string | undefined;
  /** The subscriber lost its connection since it last subscribed: messages may have been missed. */
  #lost = false;
  #closed = false;

  readonly #sweepMs: number;

  /**
   * `sub` becomes a subscriber connection; `redis` reads stored state. Both are the caller's to close.
   * `sweepMs`: how stale a job's last read gets before the sweep reads it again (a test's knob).
   */
  constructor(sub: Redis, redis: Redis, jobKey: (id: string) => string, sweepMs = SWEEP_MS) {
    this.#sub = sub;
    this.#redis = redis;
    this.#jobKey = jobKey;
    this.#sweepMs = sweepMs;
    sub.on("message", (_channel: string, message: string) => this.#message(message));
    sub.on("close", () => (this.#lost = this.#channel !== undefined));
    sub.on("ready", () => {
      if (this.#lost && !this.#closed) void this.#recover().catch(() => {});
    });
    this.#sweep = setInterval(() => void this.#sweepOld().catch(() => {}), sweepMs);
    this.#sweep.unref();
  }

  async listen(channel: string): Promise<void> {
    await this.#sub.subscribe(channel);
    this.#channel = channel;
  }

  /**
   * Resolves with the job's outcome; the caller bounds the wait (`signal` ends it). `fresh`: the
   * caller has just added this job under an id nobody else knows, so it cannot have ended yet and the
   * first read of its state is skipped (the sweep still reads it).
   */
  wait(jobId: string, signal: AbortSignal, fresh = false): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      if (this.#closed) return reject(new ClosedError("queue client"));
      const set = this.#waiting.get(jobId) ?? new Set<Waiter>();
      this.#waiting.set(jobId, set);
      if (!this.#read.has(jobId)) this.#read.set(jobId, Date.now());
      const waiter: Waiter = {
        deliver: (o) => {
          end();
          resolve(o);
        },
        fail: (error) => {
          end();
          reject(error);
        },
      };
      const end = () => {
        set.delete(waiter);
        if (set.size === 0 && this.#waiting.get(jobId) === set) {
          this.#waiting.delete(jobId);
          this.#read.delete(jobId);
        }
        signal.removeEventListener("abort", abort);
      };
      const abort = () => waiter.fail(signal.reason as Error);
      signal.addEventListener("abort", abort, { once: true });
      set.add(waiter);
      // Registered first, then read: a job that ended before this call is found here, one that ends
      // after it is heard on the channel (or by the sweep).
      if (!fresh) void this.#check([jobId]).catch(() => {});
    });
  }

  /** Stops the sweep and rejects every pending wait with ClosedError. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweep);
    const error = new ClosedError("queue client");
    for (const set of [...this.#waiting.values()]) for (const w of [...set]) w.fail(error);
  }

  /**
   * After a reconnect: once the subscription is confirmed again (ioredis re-subscribes on its own; this
   * SUBSCRIBE queues behind it), every pending job's state is read, SWEEP_MAX per round trip. A reply
   * published while the subscriber was away and stored only after this read is left to the sweep.
   */
  async #recover(): Promise<void> {
    this.#lost = false;
    await this.#sub.subscribe(this.#channel!);
    const ids = [...this.#waiting.keys()];
    const now = Date.now();
    for (const id of ids) this.#read.set(id, now);
    for (let i = 0; i < ids.length; i += SWEEP_MAX) await this.#check(ids.slice(i, i + SWEEP_MAX));
  }

  #message(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return; // not a worker's message: the sweep still finds the job's stored state
    }
    const id = (parsed as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || !this.#waiting.has(id)) return;
    if (parsed !== null && typeof parsed === "object" && "reply" in parsed) this.#deliver(id, { reply: parsed.reply });
    else void this.#check([id]).catch(() => {}); // a notice without the reply: read it from the job
  }

  #deliver(id: string, outcome: Outcome): void {
    for (const w of [...(this.#waiting.get(id) ?? [])]) w.deliver(outcome);
  }

  async #sweepOld(): Promise<void> {
    const now = Date.now();
    const ids = [...this.#read]
      .filter(([, at]) => at <= now - this.#sweepMs)
      .sort((a, b) => a[1] - b[1])
      .slice(0, SWEEP_MAX)
      .map(([id]) => id);
    for (const id of ids) this.#read.set(id, now);
    if (ids.length > 0) await this.#check(ids);
  }

  /** Reads the stored state of `ids` in one round trip and delivers those that have finished. */
  async #check(ids: string[]): Promise<void> {
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(this.#jobKey(id), "finishedOn", "returnvalue", "failedReason");
    const rows = (await pipeline.exec()) ?? [];
    rows.forEach(([error, row], i) => {
      const [finishedOn, returnvalue, failedReason] = (error ? [] : row) as Array<string | null>;
      if (!finishedOn) return;
      const id = ids[i]!;
      if (failedReason !== null && failedReason !== undefined) return this.#deliver(id, { failed: failedReason });
      let reply: unknown;
      try {
        reply = JSON.parse(returnvalue ?? "null");
      } catch {
        reply = undefined; // decodeReply turns it into a crashed result
      }
      this.#deliver(id, { reply });
    });
  }
}
