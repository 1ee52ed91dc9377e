// The light parents: one warm parent per native slot that imported no `python.preload`, only the
// standard library's everyday modules (LIGHT_PRELOAD: ~20 MB instead of ~97), for stateless runs that
// import only the standard library (route.ts). They are the same jail and the same parent.py as the
// stack's parents, with the same children; only their memory is smaller, so a child's fork, its
// copy-on-write faults and its exit cost a fraction.
//
// They are lent, not pooled: a run first holds a slot (the engine's WarmPool bounds how many runs go
// at once), then borrows a light parent, so `python.pool` of them always suffice. A run that finds
// none alive (one is being replaced) takes its slot's stack parent, as every run did before: never
// a wait. A parent that died or was retired in a run is replaced in the background.

import type { WarmParent } from "./warm.ts";

/**
 * What a light parent imports before its first child: the standard-library modules agents' code
 * imports most (a child that imports one the parent has not pays it: `datetime` ~7 ms, `statistics`
 * ~7, `dataclasses` ~13 in a fresh child, more than the light fork saves). ~7 MB, ~45 modules.
 */
export const LIGHT_PRELOAD: readonly string[] = Object.freeze(
  [
    "base64 bisect calendar collections copy csv dataclasses datetime decimal enum fractions functools hashlib",
    "heapq io itertools json logging math operator pathlib pprint random re statistics string textwrap time",
    "typing urllib.parse uuid",
  ]
    .join(" ")
    .split(" "),
);

/** After a replacement failed to start, how long before the next try (the stack's parents serve meanwhile). */
const RETRY_MS = 1000;

export class LightParents {
  readonly #size: number;
  readonly #start: () => Promise<WarmParent>;
  readonly #free: WarmParent[] = [];
  readonly #all = new Set<WarmParent>();
  #starting = 0;
  #closed = false;
  #failedAt = -Infinity;

  constructor(size: number, start: () => Promise<WarmParent>) {
    this.#size = size;
    this.#start = start;
  }

  /** Starts the missing ones and waits for them: a failure to start is the caller's error. */
  async fill(): Promise<void> {
    const missing = this.#size - this.#all.size - this.#starting;
    await Promise.all(Array.from({ length: Math.max(0, missing) }, () => this.#startOne()));
  }

  async #startOne(): Promise<void> {
    this.#starting++;
    let parent: WarmParent;
    try {
      parent = await this.#start();
    } finally {
      this.#starting--;
    }
    if (this.#closed) {
      await parent.close();
      return;
    }
    this.#all.add(parent);
    this.#free.push(parent);
    parent.jail.exited.then(
      () => this.#drop(parent),
      () => this.#drop(parent),
    );
  }

  #drop(parent: WarmParent): void {
    this.#all.delete(parent);
    const at = this.#free.indexOf(parent);
    if (at >= 0) this.#free.splice(at, 1);
    this.#refill();
  }

  /** Replaces the lost ones in the background; a failed start waits RETRY_MS before the next. */
  #refill(): void {
    if (this.#closed || performance.now() - this.#failedAt < RETRY_MS) return;
    if (this.#all.size + this.#starting >= this.#size) return;
    this.#startOne().then(
      () => this.#refill(),
      () => {
        this.#failedAt = performance.now();
      },
    );
  }

  /** A free light parent that is alive, or undefined (the caller takes its slot's stack parent). */
  take(): WarmParent | undefined {
    while (this.#free.length > 0) {
      const parent = this.#free.pop()!;
      if (parent.alive) return parent;
    }
    this.#refill();
    return undefined;
  }

  /** Gives back a parent `take` lent: alive, it serves the next run; lost, it is replaced. */
  give(parent: WarmParent): void {
    if (this.#closed || !this.#all.has(parent)) return;
    if (parent.alive) this.#free.push(parent);
    else {
      this.#all.delete(parent);
      this.#refill();
    }
  }

  /** The live ones' jail pids (tests check a run left its parent alive). */
  get pids(): number[] {
    return [...this.#all].filter((p) => p.alive).map((p) => p.jail.pid);
  }

  /** The standard library's names, as a live light parent said them (empty before one is up). */
  get stdlib(): ReadonlySet<string> {
    for (const p of this.#all) if (p.stdlib.size > 0) return p.stdlib;
    return new Set();
  }

  /** The modules a light parent holds, as it said them (empty before one is up). */
  get loaded(): ReadonlySet<string> {
    for (const p of this.#all) if (p.loaded.size > 0) return p.loaded;
    return new Set();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#free.length = 0;
    await Promise.allSettled([...this.#all].map((p) => p.close()));
    this.#all.clear();
  }
}
