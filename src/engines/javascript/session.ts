// A session on the QuickJS thread pool: pinned to one worker thread (its interpreter lives there), its
// runs served one at a time, in order. When that worker is terminated (a run of the session, or beside
// it, overran its deadline in a builtin) the session is lost and every later run says so.

import type { EngineSession } from "../engine.ts";
import { ClosedError, EngineStartError } from "../../errors.ts";
import type { ResolvedRequest } from "../../options.ts";
import type { GuestError, RunResult } from "../../types.ts";
import { failedRun, sessionLost } from "../run/failures.ts";
import { Serial } from "../run/serial.ts";
import type { WorkerHandle } from "./handle.ts";
import type { Job, JobSession } from "./job.ts";

/** What a session needs of its engine (threads.ts's ThreadEngine is one). */
export interface SessionHost {
  sessionRun(session: ThreadSession, req: ResolvedRequest): Promise<RunResult>;
}

/** A session pinned to one worker; its runs are serialised. */
export class ThreadSession implements EngineSession, JobSession {
  readonly #host: SessionHost;
  readonly handle: WorkerHandle<Job>;
  readonly id: number;
  readonly #onClose: () => void;
  readonly whenOpen: Promise<void>;
  #open!: (error?: Error) => void;
  readonly #serial = new Serial();
  #lost: string | undefined;
  #closed = false;

  constructor(host: SessionHost, handle: WorkerHandle<Job>, id: number, onClose: () => void) {
    this.#host = host;
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
    return sessionLost(`the worker thread holding it was terminated: ${this.#lost ?? "it is gone"}`);
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.#serial.run(() => this.#run(req));
  }

  async #run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) throw new ClosedError("session");
    if (this.#lost !== undefined) return failedRun("quickjs", req, this.lostError(), performance.now());
    return this.#host.sessionRun(this, req);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#serial.idle();
    this.#onClose();
    this.handle.sessions.delete(this.id);
    if (!this.handle.dead) this.handle.post({ t: "session-close", session: this.id });
  }
}
