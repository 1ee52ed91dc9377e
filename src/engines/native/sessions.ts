// Native sessions: a child of a warm parent kept alive between runs, like a kernel (its globals,
// imports, DataFrames and files persist, on purpose). A backend of the shared session life
// (src/engines/sessions/): data-session.ts owns idle time, end, close and the events; this file only
// opens a live state and runs in it.
//
// A session takes a warm parent out of the pool (the pool starts a replacement) and its ready child
// becomes the session's: the parent then serves that child alone and leaves when it ends, so a
// session's child and a stateless child never share a parent (their jails are apart, namespaces
// and all) and a stateless run never waits behind a session. The backend has no save/load/fork: the
// state is a process, so snapshot(), fork() and resume say SnapshotUnsupportedError (cannotLeave) and
// an idle session is ended after `sessions.idleMs`. A copy-on-write fork of the live child is not
// offered: the child would need fork() in its own filter, and the copy would share the parent's
// namespaces, scratch and every secret the session holds; it would not be as safe as a stateless child.

import { EngineStartError, EngineUnavailableError } from "../../core/errors.ts";
import type { RunResult } from "../../core/types.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import type { LiveState, StateBackend } from "../sessions/backend.ts";
import type { WarmParent } from "./warm.ts";
import { runInParent } from "./warm-run.ts";

/** What the engine lends a session: a warm parent of its own (out of the pool), and the bound. */
export interface NativeSessionHost {
  /** A warm parent for a session alone; undefined when the engine has none (bubblewrap off). */
  takeParent(signal?: AbortSignal): Promise<WarmParent | undefined>;
  /** Live sessions at most (`python.maxSessions`). */
  readonly maxSessions: number;
}

class NativeLive implements LiveState {
  readonly #parent: WarmParent;
  readonly #onClose: () => void;
  #turns = 0;
  #lost: string | undefined;

  constructor(parent: WarmParent, onClose: () => void) {
    this.#parent = parent;
    this.#onClose = onClose;
  }

  get lost(): string | undefined {
    if (this.#lost) return this.#lost;
    return this.#parent.alive || this.#turns === 0
      ? undefined
      : "its process ended (a deadline, a crash or its memory cap)";
  }

  async run(request: ResolvedRequest): Promise<RunResult> {
    const session = this.#turns++ === 0 ? "first" : "next";
    const result = await runInParent({ parent: this.#parent, request, started: performance.now(), session });
    if (!this.#parent.alive)
      this.#lost = `its process ended in a run that ended as ${result.ok ? "ok" : result.error.kind}`;
    return result;
  }

  async close(): Promise<void> {
    this.#onClose();
    await this.#parent.close();
  }
}

export function nativeBackend(host: NativeSessionHost): StateBackend<NativeLive> {
  let live = 0;
  return {
    engine: "native",
    async open(signal) {
      if (live >= host.maxSessions)
        throw new EngineStartError(
          `native sessions: ${live} are open, the most python.maxSessions allows; close one first`,
        );
      live++;
      let parent: WarmParent | undefined;
      try {
        parent = await host.takeParent(signal);
      } catch (error) {
        live--;
        throw error;
      }
      if (!parent) {
        live--;
        throw new EngineUnavailableError(
          "native",
          "native sessions need seal.bubblewrap: a session is a child of a warm parent in its own namespaces",
        );
      }
      let closed = false;
      return new NativeLive(parent, () => {
        if (!closed) live--;
        closed = true;
      });
    },
  };
}
