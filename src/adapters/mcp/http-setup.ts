// What serveHttp builds from its options before it listens: the options checked with their defaults,
// the stored-sessions tables and the JavaScript lane's width.

import { InvalidOptionError } from "../../core/errors.ts";
import type { Sandbox } from "../../sandbox.ts";
import { MemorySessionStore } from "../../stores/memory.ts";
import type { SessionStore } from "../../stores/store.ts";
import { DEFAULT_MCP_HTTP } from "./defaults.ts";
import { checkBind } from "./guard.ts";
import type { HttpServeOptions } from "./http-options.ts";
import { SessionIds } from "./session-ids.ts";
import { checkStoreKey, StoredSessions } from "./stored-sessions.ts";

type Resolved = HttpServeOptions & {
  sessionLeaseMs: number;
  sessionWaitMs: number;
  maxSessions: number;
  sessionTtlMs: number;
  sessionQuotaBytes: number;
};

/** serveHttp's options with their defaults, each checked, and the bearer token's digest for the bind (guard.ts). */
export function resolveHttpOptions(options: HttpServeOptions) {
  if ((options as { gate?: unknown }).gate !== undefined)
    throw new InvalidOptionError(
      "gate",
      "serveHttp queues every call through its own admission (maxInflight, maxInflightPerClient); a gate is for createMcpServer",
    );
  const o = { ...DEFAULT_MCP_HTTP, ...stripUndefined(options) };
  const tokenDigest = checkBind(o.host, o.token);
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
    throw new InvalidOptionError("port", "must be an integer from 0 to 65535");
  for (const field of [
    "maxSessions",
    "sessionTtlMs",
    "maxInflight",
    "maxInflightPerClient",
    "sessionLeaseMs",
    "sessionWaitMs",
    "sessionQuotaBytes",
  ] as const) {
    if (!Number.isSafeInteger(o[field]) || o[field] < 1)
      throw new InvalidOptionError(field, "must be a positive integer");
  }
  if (o.stateless && o.session && !o.sessionStore)
    throw new InvalidOptionError(
      "stateless",
      "session interpreters live in one process, so they cannot be stateless: give a sessionStore (any replica then serves any session), or run them stateful with sticky routing on Mcp-Session-Id",
    );
  return { o, tokenDigest };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The stored-sessions table for serveHttp's options, after checking they fit together. */
export function storedSessions(o: Resolved, store: SessionStore): StoredSessions {
  if (!o.session) throw new InvalidOptionError("sessionStore", "stores stateful sessions, so it needs session: true");
  if (o.stateless)
    throw new InvalidOptionError(
      "stateless",
      "with a sessionStore any process already answers any request of a session; leave stateless off",
    );
  checkStoreKey(o.sandbox, store);
  return sessionsIn(o, store);
}

/**
 * What a process keeps of 2026-07-28 sessions without a sessionStore: as DiskSessionStore's default
 * budget, past which the least recently used sessions are removed (their next call is told so).
 */
export const IN_PROCESS_SESSION_BYTES = 1024 * 1024 * 1024;

/**
 * Without a sessionStore, 2026-07-28 sessions (named by handles) are kept in this process: a memory
 * store within IN_PROCESS_SESSION_BYTES, so they live as long as the server and move nowhere.
 */
export function handleSessions(o: Resolved): StoredSessions {
  return sessionsIn(o, new MemorySessionStore({ maxBytes: IN_PROCESS_SESSION_BYTES }));
}

function sessionsIn(o: Resolved, store: SessionStore): StoredSessions {
  return new StoredSessions({
    ids: new SessionIds(o.sandbox.options.sessions.key),
    quotaBytes: o.sessionQuotaBytes,
    sandbox: o.sandbox,
    store,
    pythonEngine: o.pythonEngine ?? o.sandbox.options.python.engine,
    leaseMs: o.sessionLeaseMs,
    waitMs: o.sessionWaitMs,
    maxLive: o.maxSessions,
    idleMs: o.sessionTtlMs,
  });
}

/**
 * How many JavaScript calls to hand the sandbox at once: the runs the thread pool may run
 * (`maxWorkers` × `runsPerWorker`) plus those it may park (`javascript.maxParked`: a run that waits on
 * a timer, a host call or fetch takes no turn of its thread), else one on the host's own thread. A
 * run's deadline does not count its thread's time in other runs' code, so a spinner beside a benign
 * run delays it, never fails it. Waiting in the fair queue costs a call nothing.
 */
export function javascriptSlots(options: Sandbox["options"]): number {
  const js = (
    options as { javascript?: { isolation?: string; workers?: number; maxWorkers?: number; runsPerWorker?: number } }
  ).javascript;
  if (js?.isolation !== "thread") return 1;
  return (js.maxWorkers ?? js.workers ?? 1) * (js.runsPerWorker ?? 1) + ((js as { maxParked?: number }).maxParked ?? 0);
}
