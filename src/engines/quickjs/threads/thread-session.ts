// A session on the QuickJS thread pool: pinned to one worker thread (its interpreter lives there), its
// runs served one at a time, in order. When that worker is terminated (a run of the session, or beside
// it, overran its deadline in a builtin) the session is lost and every later run says so.

import type { EngineSession } from "../../engine.ts";
import {
  ClosedError,
  EngineStartError,
  SnapshotRejectedError,
  SnapshotUnsupportedError,
  type SnapshotRejection,
} from "../../../core/errors.ts";
import type { ResolvedRequest } from "../../../options/index.ts";
import type { GuestError, RunResult } from "../../../core/types.ts";
import { failedRun, sessionLost } from "../../../kit/failures.ts";
import { Serial } from "../../../kit/serial.ts";
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

  /** @internal the worker answered `session-open` (`rejected`: a resume's state was refused) */
  opened(error: string | undefined, rejected?: SnapshotRejection): void {
    if (error === undefined) return this.#open();
    if (!rejected) return this.#open(new EngineStartError(`the QuickJS worker could not open a session: ${error}`));
    // The worker's message is the refusal's own; its prefix is put back by the error's constructor.
    this.#open(
      new SnapshotRejectedError(rejected, error.replace(/^the session snapshot was refused \([a-z]+\): /, "")),
    );
  }

  #saving: { resolve(state: Uint8Array): void; reject(error: Error): void } | undefined;

  /** The session's state as bytes, taken in its worker between runs (session-state.ts seals them). */
  save(maxMemoryBytes?: number): Promise<Uint8Array> {
    return this.#serial.run(() => {
      if (this.#closed) return Promise.reject(new ClosedError("session"));
      if (this.#lost !== undefined || this.handle.dead)
        return Promise.reject(
          new SnapshotUnsupportedError("state", `this session is lost: ${this.#lost ?? "its worker is gone"}`),
        );
      // An idle worker does not hold the process open: the save counts as an opening until answered.
      const handle = this.handle;
      handle.opening++;
      handle.updateRef();
      const done = () => {
        handle.opening--;
        handle.updateRef();
      };
      return new Promise<Uint8Array>((resolve, reject) => {
        this.#saving = { resolve, reject };
        handle.post({
          t: "session-save",
          session: this.id,
          ...(maxMemoryBytes === undefined ? {} : { maxMemoryBytes }),
        });
      }).finally(done);
    });
  }

  /** @internal the worker answered `session-save` */
  saved(answer: { state?: Uint8Array; error?: string; unsupported?: boolean; size?: boolean }): void {
    const saving = this.#saving;
    this.#saving = undefined;
    if (!saving) return;
    if (answer.state) saving.resolve(answer.state);
    else if (answer.unsupported)
      saving.reject(new SnapshotUnsupportedError(answer.size ? "size" : "state", answer.error ?? "it cannot be taken"));
    else
      saving.reject(
        new EngineStartError(`the QuickJS worker could not save the session: ${answer.error ?? "no answer"}`),
      );
  }

  /** @internal the worker under this session is gone */
  lose(why: string): void {
    this.#lost ??= why;
    this.#saving?.reject(new SnapshotUnsupportedError("state", `this session was lost: ${why}`));
    this.#saving = undefined;
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
