// The MCP HTTP server's options (`serveHttp`, `wasmcell mcp --http`), apart from the server so the
// rooms that set it up (http-setup.ts) read them without importing the server. Defaults: defaults.ts.
import type { SessionStore } from "../../stores/store.ts";
import type { EventTap } from "./events.ts";
import type { RunCodeToolOptions } from "../tools/run-code.ts";

/**
 * `createMcpServer`'s options without its `gate`: the HTTP server puts every call through its own
 * admission and fair queue, so a gate given here would be ignored; it is refused instead.
 */
export interface HttpServeOptions extends RunCodeToolOptions {
  /** TCP port; 0 picks a free one (the URL in the result says which). @defaultValue 0 */
  port?: number;
  /** Address to bind. Anything but loopback needs `token`. @defaultValue "127.0.0.1" */
  host?: string;
  /** Bearer token every /mcp and /metrics request must carry (at least 16 characters). @defaultValue none */
  token?: string;
  /** Largest request body accepted, in bytes. @defaultValue twice the code cap plus 1 MiB */
  maxBodyBytes?: number;
  /** No session ids: any process answers any request (replicas behind a balancer). @defaultValue false */
  stateless?: boolean;
  /** Open sessions at once (stateful mode); past it initialize gets 503. @defaultValue 128 */
  maxSessions?: number;
  /** A session with no request for this long is closed. @defaultValue 600000 (10 minutes) */
  sessionTtlMs?: number;
  /** Tool calls in flight (queued or running) across all clients. @defaultValue 256 */
  maxInflight?: number;
  /** Tool calls in flight for one client (a session; stateless: a source address). @defaultValue 16 */
  maxInflightPerClient?: number;
  /**
   * Keep `session: true` sessions in this store between calls instead of in this process: a
   * DiskSessionStore lets them survive a restart, a RedisSessionStore lets any replica serve them
   * (docs/server.md, "Sessions across restarts and replicas"). The MCP session id is then the durable
   * key: any process with the store accepts it. Needs `session: true`, and the sandbox's `sessions.key`
   * shared by every process that reads the store. @defaultValue none (sessions live in this process)
   */
  sessionStore?: SessionStore;
  /** Stored sessions: a session lock's lease, renewed while a call runs. @defaultValue 10000 */
  sessionLeaseMs?: number;
  /** Stored sessions: how long a call waits for a session another call holds, then gets "busy". @defaultValue 30000 */
  sessionWaitMs?: number;
  /**
   * Stored sessions: the most bytes one MCP session's records may take in the store (each language it
   * ran and each fork it made); a call whose state would pass it is refused and not kept. Size a store
   * with a budget (DiskSessionStore's `maxBytes`) at `maxSessions` × this, and no session pushes out
   * another's. @defaultValue 268435456 (256 MiB)
   */
  sessionQuotaBytes?: number;
  /** Stateless mode: tell clients apart by the last X-Forwarded-For hop (set by a balancer you run). @defaultValue false */
  trustProxy?: boolean;
  /** Calls handed to the sandbox at once per engine lane. @defaultValue javascript: one per thread the JS pool may grow to (`javascript.maxWorkers`; 1 on the host's thread); python: `python.pool` */
  concurrency?: { javascript?: number; python?: number };
  /**
   * The tap given to the sandbox as `onEvent` (`onEvent: tap.listener`): /metrics counts engine
   * restarts from its `restart` events. @defaultValue none (the restart counter stays 0)
   */
  events?: EventTap;
}
