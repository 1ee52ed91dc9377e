// An engine whose runs go to `inner` and whose sessions are DataSessions over a backend: how the
// JavaScript engines (the thread pool and in-process) get sessions that are data without either of
// them knowing about stores, eviction or snapshots.

import type { ResolvedOptions, ResolvedRequest } from "../../options/index.ts";
import { ENGINE_INFO, type ResumeOptions, type RunResult } from "../../core/types.ts";
import type { Engine } from "../engine.ts";
import type { LiveState, StateBackend } from "./backend.ts";
import type { SnapshotHeader } from "./snapshot.ts";
import type { DataSession } from "./data-session.ts";
import { SessionKeeper } from "./keeper.ts";

export class SessionsEngine<L extends LiveState = LiveState> implements Engine {
  readonly name: Engine["name"];
  readonly reportsRestarts: boolean;
  readonly inner: Engine;
  readonly keeper: SessionKeeper<L>;

  constructor(inner: Engine, backend: StateBackend<L>, options: ResolvedOptions) {
    this.name = inner.name;
    this.inner = inner;
    this.reportsRestarts = inner.reportsRestarts === true;
    this.keeper = new SessionKeeper(backend, options);
  }

  /** Open sessions, live or stored (tests look: nothing may leak). */
  get sessions(): ReadonlySet<DataSession<L>> {
    return this.keeper.sessions;
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.inner.run(req);
  }

  openSession(): Promise<DataSession<L>> {
    return this.keeper.open();
  }

  snapshotHeader(): Promise<Omit<SnapshotHeader, "createdAt">> {
    return this.keeper.header(ENGINE_INFO[this.name].languages[0]);
  }

  // ResumeOptions.reseed is not read by the JavaScript backends: Math.random is reseeded on every
  // restore (a guest cannot seed it, so no sequence of the guest's is lost by that).
  resumeSession(
    state: Uint8Array,
    bytes: number,
    header?: SnapshotHeader,
    options: ResumeOptions = {},
  ): Promise<DataSession<L>> {
    return this.keeper.resume(state, bytes, header, options);
  }

  async close(): Promise<void> {
    await this.keeper.close();
    await this.inner.close();
  }

  async destroy(): Promise<void> {
    await this.inner.destroy();
    await this.keeper.close();
  }
}
