// A session on the QuickJS thread pool: pinned to one worker thread (its interpreter lives there), its
// runs serialised. When that worker is terminated (a run of the session, or beside it, overran its
// deadline in a builtin) the session is lost and every later run says so.

import type { EngineSession } from "../engine.ts";
import { ClosedError, EngineStartError } from "../../errors.ts";
import type { ResolvedRequest } from "../../options.ts";
import type { GuestError, RunResult } from "../../types.ts";
import { failure } from "../quickjs/failure.ts";
import type { WorkerHandle } from "./handle.ts";
import type { ThreadEngine } from "./threads.ts";

export function crashedError(message: string): GuestError {
  return { kind: "crashed", name: "EngineCrash", message };
}

/** A session pinned to one worker; its runs are serialised. */
export class ThreadSession implements EngineSession {
  readonly #engine: ThreadEngine;
  readonly handle: WorkerHandle;
  readonly id: number;
  readonly #onClose: () => void;
  readonly whenOpen: Promise<void>;
  #open!: (error?: Error) => void;
  #queue: Promise<unknown> = Promise.resolve();
  #lost: string | undefined;
  #closed = false;

  constructor(engine: ThreadEngine, handle: WorkerHandle, id: number, onClose: () => void) {
    this.#engine = engine;
    this.handle = handle;
    this.id = id;
    this.#onClose = onClose;
    this.whenOpen = new Promise<void>((resolve, reject) => {
      this.#open = (error) => (error === undefined ? resolve() : reject(error));
    });
  }

  /** @internal the worker answered `session-open` */
  opened(error: string | undefined): void {
    this.#open(
      error === undefined ? undefined : new EngineStartError(`the QuickJS worker could not open a session: ${error}`),
    );
  }

  /** @internal the worker under this session is gone */
  lose(why: string): void {
    this.#lost ??= why;
    this.#open(new EngineStartError(`the QuickJS worker was lost while opening a session (${why})`));
  }

  lostError(): GuestError {
    return crashedError(
      `this session was lost: the worker thread holding it was terminated (${this.#lost ?? "it is gone"}); its state is gone, open a new session`,
    );
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    const next = this.#queue.then(() => this.#run(req));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) throw new ClosedError("session");
    if (this.#lost !== undefined) return failure(req, this.lostError(), performance.now());
    return this.#engine.sessionRun(this, req);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#onClose();
    this.handle.sessions.delete(this.id);
    if (!this.handle.dead) this.handle.post({ t: "session-close", session: this.id });
  }
}
