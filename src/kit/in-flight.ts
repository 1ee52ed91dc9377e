// Work that is still going, so `close()` can drain it: a sandbox or engine that closes waits for every
// run it accepted instead of dropping results on the floor.

export class InFlight {
  readonly #work = new Set<Promise<unknown>>();

  /** Remembers `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#work.add(work);
    const done = () => this.#work.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves when everything tracked so far has settled (fulfilled or rejected). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#work]);
  }
}
