// Serving the MCP server over stdio (what Claude Desktop/Code and Cursor launch). Streamable HTTP, with
// its admission, token and health endpoints, is in http.ts.
//
// The SDK's stdio entry decides the revision from the client's first message: `server/discover` (or
// any request with the 2026-07-28 `_meta` envelope) gets a 2026-07-28 server, `initialize` a 2025-11-25
// one, each from the same factory, pinned for the connection.
//
// 2025-11-25 with a `sessionStore`: the server's one session is a stored session (stored-sessions.ts)
// named `sessionName`: every call's state is in the store before its reply, so a client that restarts
// the server (or a crash) continues where the last completed call left off, and fork_session is
// offered. 2026-07-28 with `session: true`: sessions are named by handles (in the store when there is
// one, so they too outlive the process; else in this process).

import { serveStdio as serveSdkStdio } from "@modelcontextprotocol/server/stdio";
import { InvalidOptionError } from "../../core/errors.ts";
import { MemorySessionStore } from "../../stores/memory.ts";
import type { SessionStore } from "../../stores/store.ts";
import { DEFAULT_MCP_HTTP, DEFAULT_MCP_STDIO } from "./defaults.ts";
import { mcpServerFactory, type McpServerOptions } from "./server.ts";
import { SessionIds } from "./session-ids.ts";
import { TaskTable } from "./tasks.ts";
import { IN_PROCESS_SESSION_BYTES } from "./http-setup.ts";
import { checkStoreKey, StoredSessions } from "./stored-sessions.ts";

export interface StdioServeOptions extends McpServerOptions {
  /**
   * Keep the session in this store (needs `session: true`, and the sandbox's `sessions.key` for a store
   * that outlives the process). @defaultValue none: the session lives and dies with the process
   */
  sessionStore?: SessionStore;
  /** The stored session's durable name (letters, digits, `_`, `-`; up to 64). @defaultValue "stdio" */
  sessionName?: string;
  /** A session lock's lease (ms). @defaultValue 10000 */
  sessionLeaseMs?: number;
  /** How long (ms) a call waits for the session's lock, then "busy". @defaultValue 30000 */
  sessionWaitMs?: number;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The credential identity of a stdio client: the process that launched the server (session-ids.ts). */
const IDENTITY = "stdio";

/** Serves one client over stdin/stdout until stdin closes. */
export function serveStdio(options: StdioServeOptions): Promise<{ closed: Promise<void> }> {
  const stored = options.sessionStore ? storedSession(options, options.sessionStore) : undefined;
  const handles = options.session
    ? (stored?.sessions ??
      sessionsIn(
        options,
        new MemorySessionStore({ maxBytes: IN_PROCESS_SESSION_BYTES }),
        DEFAULT_MCP_STDIO.sessionQuotaBytes,
      ))
    : undefined;
  const tasks = new TaskTable();
  const make = mcpServerFactory({
    ...options,
    tasks,
    ...(stored ? { stored: stored.sessions } : {}),
    ...(handles ? { handles } : {}),
  });
  const named = stored?.sessions.ids.named(IDENTITY, stored.name);
  const handle = serveSdkStdio((ctx) =>
    ctx.era === "modern"
      ? make(options.gate, undefined, { era: "modern", identity: IDENTITY })
      : make(options.gate, named, { era: "legacy", identity: IDENTITY }),
  );
  const closed = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  }).then(async () => {
    tasks.close();
    await handle.close();
    await handles?.close();
  });
  return Promise.resolve({ closed });
}

function storedSession(o: StdioServeOptions, store: SessionStore): { sessions: StoredSessions; name: string } {
  if (!o.session) throw new InvalidOptionError("sessionStore", "stores a stateful session, so it needs session: true");
  const name = o.sessionName ?? DEFAULT_MCP_STDIO.sessionName;
  if (!NAME.test(name))
    throw new InvalidOptionError(
      "sessionName",
      `must be 1–64 letters, digits, "_" or "-", got ${JSON.stringify(name)}`,
    );
  for (const field of ["sessionLeaseMs", "sessionWaitMs"] as const) {
    const v = o[field];
    if (v !== undefined && !(Number.isSafeInteger(v) && v > 0))
      throw new InvalidOptionError(field, `must be a positive integer (milliseconds), got ${String(v)}`);
  }
  checkStoreKey(o.sandbox, store);
  return { sessions: sessionsIn(o, store, DEFAULT_MCP_STDIO.sessionQuotaBytes), name };
}

function sessionsIn(o: StdioServeOptions, store: SessionStore, quotaBytes: number): StoredSessions {
  return new StoredSessions({
    sandbox: o.sandbox,
    store,
    pythonEngine: o.pythonEngine ?? o.sandbox.options.python.engine,
    leaseMs: o.sessionLeaseMs ?? DEFAULT_MCP_STDIO.sessionLeaseMs,
    waitMs: o.sessionWaitMs ?? DEFAULT_MCP_STDIO.sessionWaitMs,
    // The session's languages and the forks the client made: past this, idle ones wait in the store.
    maxLive: 16,
    idleMs: DEFAULT_MCP_HTTP.sessionTtlMs,
    ids: new SessionIds(o.sandbox.options.sessions.key),
    quotaBytes,
  });
}
