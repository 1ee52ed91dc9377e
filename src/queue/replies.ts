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
// recently read first): the stored state is the guarantee; pub/sub only makes it fast.
// Everything read here is untrusted and goes through wire.ts's decodeReply before a caller sees it.

import type { Redis } from "ioredis";

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
}

export class ReplyWaiters {
  readonly #sub: Redis;
  readonly #redis: Redis;
  readonly #jobKey: (id: string) => string;
  readonly #waiting = new Map<string, Set<Waiter>>();
  /** When each waited-for job's state was last read (or its first waiter came). */
  readonly #read = new Map<string, number>();
  readonly #sweep: NodeJS.Timeout;

  /** `sub` becomes a subscriber connection; `redis` reads stored state. Both are the caller's to close. */
  constructor(sub: Redis, redis: Redis, jobKey: (id: string) => string) {
    this.#sub = sub;
    this.#redis = redis;
    this.#jobKey = jobKey;
    sub.on("message", (_channel: string, message: string) => this.#message(message));
    this.#sweep = setInterval(() => void this.#sweepOld().catch(() => {}), SWEEP_MS);
    this.#sweep.unref();
  }

  async listen(channel: string): Promise<void> {
    await this.#sub.subscribe(channel);
  }

  /**
   * Resolves with the job's outcome; the caller bounds the wait (`signal` ends it). `fresh`: the
   * caller has just added this job under an id nobody else knows, so it cannot have ended yet and the
   * first read of its state is skipped (the sweep still reads it).
   */
  wait(jobId: string, signal: AbortSignal, fresh = false): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const set = this.#waiting.get(jobId) ?? new Set<Waiter>();
      this.#waiting.set(jobId, set);
      if (!this.#read.has(jobId)) this.#read.set(jobId, Date.now());
      const waiter: Waiter = {
        deliver: (o) => {
          end();
          resolve(o);
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
      const abort = () => {
        end();
        reject(signal.reason as Error);
      };
      signal.addEventListener("abort", abort, { once: true });
      set.add(waiter);
      // Registered first, then read: a job that ended before this call is found here, one that ends
      // after it is heard on the channel (or by the sweep).
      if (!fresh) void this.#check([jobId]).catch(() => {});
    });
  }

  close(): void {
    clearInterval(this.#sweep);
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
      .filter(([, at]) => at <= now - SWEEP_MS)
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
