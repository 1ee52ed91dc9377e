// The sandbox's event channel as the HTTP server listens to it. `onEvent` is fixed when the sandbox is
// created, before the server exists; an EventTap is passed there and to `serveHttp`, which subscribes
// its /metrics counters (engine restarts come from `restart` events, the engines' own word that a
// process, worker or module was replaced, never from how a call ended).

import type { SandboxEvent, SandboxEventListener } from "../../core/events.ts";

export class EventTap {
  readonly #listeners = new Set<SandboxEventListener>();

  /** `forward`: a listener that hears every event first (a log printer, the application's own). */
  constructor(forward?: SandboxEventListener) {
    if (forward) this.#listeners.add(forward);
  }

  /** Pass this as the sandbox's `onEvent`. */
  readonly listener: SandboxEventListener = (event: SandboxEvent) => {
    for (const l of this.#listeners) l(event);
  };

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: SandboxEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
