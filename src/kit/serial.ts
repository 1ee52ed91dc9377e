// One-at-a-time work, in order: a session's runs. A failed step does not stop the ones after it (each
// caller gets its own rejection), and `idle()` tells when everything queued so far is done.

export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `step` after every step queued before it has settled; settles as `step` does. */
  run<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(step);
    this.#tail = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Resolves once every step queued so far has settled. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}
