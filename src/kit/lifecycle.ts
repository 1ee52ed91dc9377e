// The shell every engine shares: admission, the work in flight, the open sessions, and the two ways
// out. `close()` stops admission, waits for every accepted run, closes the sessions, then frees the
// engine's own resources; `destroy()` stops admission, frees at once (runs in flight end as the
// engine's kill makes them end), then closes the sessions. Each is idempotent (a second call waits for the
// first); `destroy()` during a `close()` still destroys, since a drain can wait on a stuck run, and a
// `close()` after a `destroy()` waits for the destroy. What is freed and how stays in each engine.

import { ClosedError } from "../core/errors.ts";
import { InFlight } from "./in-flight.ts";

interface Closable {
  close(): Promise<void>;
}

export class EngineLifecycle<S extends Closable = Closable> {
  readonly #what: string;
  readonly #inFlight = new InFlight();
  readonly #sessions = new Set<S>();
  #closing: Promise<void> | undefined;
  #destroying: Promise<void> | undefined;
  /** Set before any closing work starts, so that work already sees the engine as closed. */
  #ended = false;

  /** `what` names the engine in ClosedError ("python engine"). */
  constructor(what: string) {
    this.#what = what;
  }

  /** False once close or destroy began. */
  get open(): boolean {
    return !this.#ended;
  }

  /** Open sessions (read-only view). */
  get sessions(): ReadonlySet<S> {
    return this.#sessions;
  }

  /** Throws ClosedError once close or destroy began. */
  admit(): void {
    if (!this.open) throw new ClosedError(this.#what);
  }

  /** Remembers `work` until it settles, so close() waits for it; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    return this.#inFlight.track(work);
  }

  /**
   * Admits `start()` and tracks its promise: the common shape of `run`. Once closed it returns a
   * rejected promise (ClosedError) and never calls `start`: a run refused is an answer, not a throw.
   */
  run<T>(start: () => Promise<T>): Promise<T> {
    if (!this.open) return Promise.reject(new ClosedError(this.#what));
    return this.track(start());
  }

  /** Adds an open session; the returned function removes it (call it from the session's close). */
  addSession(session: S): () => void {
    this.admit();
    this.#sessions.add(session);
    return () => void this.#sessions.delete(session);
  }

  /** Stops admission, drains the runs in flight, closes the sessions, then `onClose()`. */
  close(onClose: () => Promise<void>): Promise<void> {
    if (this.#destroying) return this.#destroying;
    this.#ended = true;
    this.#closing ??= (async () => {
      await this.#inFlight.drain();
      await this.#closeSessions();
      await onClose();
    })();
    return this.#closing;
  }

  /**
   * Stops admission, then `onDestroy()` (which ends what is running), then closes the sessions, without
   * waiting for runs in flight: the engine's kill ends them, so a session's queue drains at once.
   */
  destroy(onDestroy: () => Promise<void>): Promise<void> {
    this.#ended = true;
    this.#destroying ??= (async () => {
      await onDestroy();
      await this.#closeSessions();
    })();
    return this.#destroying;
  }

  /** Resolves when every run tracked so far has settled. */
  drain(): Promise<void> {
    return this.#inFlight.drain();
  }

  async #closeSessions(): Promise<void> {
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
  }
}
