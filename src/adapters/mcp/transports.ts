// Serving the MCP server over stdio (what Claude Desktop/Code and Cursor launch). Streamable HTTP, with
// its admission, token and health endpoints, is in http.ts.
//
// With a `sessionStore` the stdio server's one session is a stored session (stored-sessions.ts) named
// `sessionName`: every call's state is in the store before its reply, so a client that restarts the
// server (or a crash) continues where the last completed call left off, and fork_session is offered.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InvalidOptionError } from "../../core/errors.ts";
import type { SessionStore } from "../../stores/store.ts";
import { DEFAULT_MCP_HTTP, DEFAULT_MCP_STDIO } from "./defaults.ts";
import { createMcpServer, mcpServerFactory, type McpServerOptions } from "./server.ts";
import { SessionIds } from "./session-ids.ts";
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

/** Serves one client over stdin/stdout until stdin closes. */
export async function serveStdio(options: StdioServeOptions): Promise<{ closed: Promise<void> }> {
  const stored = options.sessionStore ? storedSession(options, options.sessionStore) : undefined;
  const server = stored
    ? mcpServerFactory({ ...options, stored: stored.sessions })(options.gate, stored.name)
    : createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", () => void server.close().then(resolve, resolve));
  }).then(() => stored?.sessions.close());
  await server.connect(transport);
  return { closed };
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
  const sessions = new StoredSessions({
    sandbox: o.sandbox,
    store,
    pythonEngine: o.pythonEngine ?? o.sandbox.options.python.engine,
    leaseMs: o.sessionLeaseMs ?? DEFAULT_MCP_STDIO.sessionLeaseMs,
    waitMs: o.sessionWaitMs ?? DEFAULT_MCP_STDIO.sessionWaitMs,
    // The session's languages and the forks the client made: past this, idle ones wait in the store.
    maxLive: 16,
    idleMs: DEFAULT_MCP_HTTP.sessionTtlMs,
    ids: new SessionIds(o.sandbox.options.sessions.key),
    quotaBytes: DEFAULT_MCP_STDIO.sessionQuotaBytes,
  });
  return { sessions, name };
}
