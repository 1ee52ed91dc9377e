// What one run holds on the host — its network handle and the sockets under it, its pending host
// calls, its listeners and timers — owned by one object and let go when the run settles, on whichever
// path it settles: a value, a guest error, the deadline, the caller's abort, a worker killed or lost,
// the engine closed. An engine registers each resource as it takes it and settles the run through
// `close`; a resource registered after the close is let go at once, so nothing of a run outlives it by
// arriving late. Without one owner, each path had to remember each resource, and one did not (the
// thread pool dropped the run's network handle, and its sockets stayed open into the next run).

export class RunScope implements Disposable {
  readonly #disposers: Array<() => void> = [];
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `dispose` when the run settles, or now if it has. The last registered runs first. */
  defer(dispose: () => void): void {
    if (this.#closed) disposeQuietly(dispose);
    else this.#disposers.push(dispose);
  }

  /** Closes `resource` when the run settles; returns it. */
  own<T extends { close(): void }>(resource: T): T {
    this.defer(() => resource.close());
    return resource;
  }

  /** Lets go of everything the run holds. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (let d = this.#disposers.pop(); d; d = this.#disposers.pop()) disposeQuietly(d);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Runs `work` with a scope of its own, closed when the work settles (fulfilled or rejected). */
export async function scoped<T>(work: (scope: RunScope) => Promise<T>): Promise<T> {
  const scope = new RunScope();
  try {
    return await work(scope);
  } finally {
    scope.close();
  }
}

/**
 * A disposer that throws must not keep the others from running, nor the run from settling (its
 * result is already decided); the disposers are the host's own close/abort/clear calls.
 */
function disposeQuietly(dispose: () => void): void {
  try {
    dispose();
  } catch {
    // Nothing to report to: the run has its result, and the resource is as closed as it can be.
  }
}
