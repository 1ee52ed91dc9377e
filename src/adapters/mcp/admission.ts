// Admission for the HTTP server: how many tool calls may be in flight (queued or running), per server
// and per client, and the order in which admitted calls start. Past a cap a call is refused at once
// with a reason and a retry hint (the HTTP layer turns that into 503 + Retry-After) — nothing that is
// already running or queued for another client is touched.
//
// Admitted calls wait in one queue per client and start round-robin across clients, so a client with
// fifty calls queued and a client with one both get the next free slot in turn: one busy (or hostile)
// client cannot starve the others. Slots are per lane (JavaScript, Python) because the engines behind
// them are separate pools: a queue of slow Python calls must not hold up JavaScript.

/** Why a call was refused. */
export type RefusalReason = "max-inflight" | "max-inflight-per-client" | "max-sessions" | "draining";

export interface Refusal {
  reason: RefusalReason;
  message: string;
  retryAfterSeconds: number;
}

export interface AdmissionLimits {
  /** Tool calls in flight (queued or running) across all clients. */
  maxInflight: number;
  /** Tool calls in flight for one client. */
  maxInflightPerClient: number;
}

/** Counts in-flight calls per server and per client; `admit` reserves a place or says why not. */
export class Admission {
  readonly #limits: AdmissionLimits;
  readonly #perClient = new Map<string, number>();
  #total = 0;

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  get inflight(): number {
    return this.#total;
  }

  /** Reserves `n` in-flight places for `client`; the returned release gives them back (once). */
  admit(client: string, n = 1): { release: () => void } | Refusal {
    const mine = this.#perClient.get(client) ?? 0;
    if (mine + n > this.#limits.maxInflightPerClient) {
      return {
        reason: "max-inflight-per-client",
        message: `this client already has ${mine} tool calls in flight (the cap is ${this.#limits.maxInflightPerClient} per client); wait for one to finish and retry`,
        retryAfterSeconds: 1,
      };
    }
    if (this.#total + n > this.#limits.maxInflight) {
      return {
        reason: "max-inflight",
        message: `the server has ${this.#total} tool calls in flight (the cap is ${this.#limits.maxInflight}); retry shortly`,
        retryAfterSeconds: 1,
      };
    }
    this.#perClient.set(client, mine + n);
    this.#total += n;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#total -= n;
        const left = (this.#perClient.get(client) ?? n) - n;
        if (left > 0) this.#perClient.set(client, left);
        else this.#perClient.delete(client);
      },
    };
  }
}

interface Job {
  start: () => void;
  cancel: () => void;
}

/** Runs at most `capacity` jobs at once; waiting jobs start round-robin across clients. */
export class FairQueue {
  readonly #capacity: number;
  readonly #queues = new Map<string, Job[]>();
  /** Clients with waiting jobs, in the order they get their next turn. */
  #ring: string[] = [];
  #running = 0;
  #waiting = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("capacity must be a positive integer");
    this.#capacity = capacity;
  }

  /** Calls waiting for a slot. */
  get depth(): number {
    return this.#waiting;
  }

  get running(): number {
    return this.#running;
  }

  /** Runs `work` when `client`'s turn comes. An abort while waiting rejects without running it. */
  run<T>(client: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const onAbort = () => job.cancel();
      const job: Job = {
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          this.#running++;
          work()
            .then(resolve, reject)
            .finally(() => {
              this.#running--;
              this.#pump();
            });
        },
        cancel: () => {
          const queue = this.#queues.get(client);
          const at = queue?.indexOf(job) ?? -1;
          if (queue && at >= 0) {
            queue.splice(at, 1);
            this.#waiting--;
            if (queue.length === 0) {
              this.#queues.delete(client);
              this.#ring = this.#ring.filter((c) => c !== client);
            }
          }
          reject(signal?.reason as Error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      let queue = this.#queues.get(client);
      if (!queue) {
        queue = [];
        this.#queues.set(client, queue);
        this.#ring.push(client);
      }
      queue.push(job);
      this.#waiting++;
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.#capacity && this.#ring.length > 0) {
      const client = this.#ring.shift()!;
      const queue = this.#queues.get(client)!;
      const job = queue.shift()!;
      this.#waiting--;
      if (queue.length > 0) this.#ring.push(client);
      else this.#queues.delete(client);
      job.start();
    }
  }
}
