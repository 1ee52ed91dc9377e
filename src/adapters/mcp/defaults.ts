// The MCP servers' defaults, in one place (docs/server.md lists them; test/options/options.test.ts checks it).

/** The MCP HTTP server's settings (`serveHttp`, `wasmcell mcp --http`; see adapters/mcp/http.ts). */
export const DEFAULT_MCP_HTTP = Object.freeze({
  /** TCP port; 0 picks a free one. */
  port: 0,
  /** Address to bind; anything but loopback needs a bearer token. */
  host: "127.0.0.1",
  /** Session ids on (one process per client session); true for replicas behind a balancer. */
  stateless: false,
  /** Open sessions at once; past it initialize gets 503 + Retry-After. */
  maxSessions: 128,
  /** A session with no request for this long (ms) is closed. */
  sessionTtlMs: 600_000,
  /** Tool calls in flight (queued or running) across all clients; past it 503 + Retry-After. */
  maxInflight: 256,
  /** Tool calls in flight for one client. */
  maxInflightPerClient: 16,
  /** Tell stateless clients apart by the last X-Forwarded-For hop. */
  trustProxy: false,
  /** On SIGTERM, how long (ms) in-flight calls may finish before the CLI closes. */
  drainMs: 25_000,
  /** Stored sessions: a session lock's lease (ms), renewed while a call runs; a dead holder frees it after this. */
  sessionLeaseMs: 10_000,
  /** Stored sessions: how long (ms) a call waits for its session's lock held by another call, then "busy". */
  sessionWaitMs: 30_000,
  /** Stored sessions: the most bytes one MCP session's records take in the store, its forks' included. */
  sessionQuotaBytes: 256 * 1024 * 1024,
});

/** The MCP stdio server's settings for stored sessions (`serveStdio` with a `sessionStore`). */
export const DEFAULT_MCP_STDIO = Object.freeze({
  /** The stored session's durable name: a restarted server with the same name and store continues it. */
  sessionName: "stdio",
  /** A session lock's lease (ms), as for HTTP (a second server on the same store waits for it). */
  sessionLeaseMs: DEFAULT_MCP_HTTP.sessionLeaseMs,
  /** How long (ms) a call waits for its session's lock held by another server, then "busy". */
  sessionWaitMs: DEFAULT_MCP_HTTP.sessionWaitMs,
  /** The most bytes the session's records take in the store, its forks' included. */
  sessionQuotaBytes: DEFAULT_MCP_HTTP.sessionQuotaBytes,
});
