// `wasmcell mcp`: the MCP server over stdio (default) or Streamable HTTP (--http). Engine, limits and
// admission are the operator's flags, never the model's arguments.

import { parseArgs } from "node:util";
import { serveHttp, type HttpServeOptions } from "../adapters/mcp/http.ts";
import { DEFAULT_MCP_HTTP } from "../adapters/mcp/defaults.ts";
import { serveStdio, type StdioServeOptions } from "../adapters/mcp/transports.ts";
import { EventTap } from "../adapters/mcp/events.ts";
import { ENGINE_INFO, PYTHON_ENGINES } from "../core/types.ts";
import { createSandbox, DEFAULT_PYTHON } from "../index.ts";
import { javascriptFromFlags, limitsFromFlags, pythonFromFlags, untilSignal } from "./engine-flags.ts";
import { eventPrinter, networkFromFlags } from "./events.ts";
import { UsageError, oneOf, positiveInt, type Io } from "./usage.ts";
import { sessionKey } from "./session-file.ts";
import type { SessionStore } from "../stores/store.ts";

const HTTP_ONLY = [
  "port",
  "host",
  "token",
  "stateless",
  "max-sessions",
  "session-ttl",
  "max-inflight",
  "max-inflight-per-client",
  "trust-proxy",
  "drain-ms",
  "session-quota-mb",
] as const;

export async function mcpCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      http: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      stateless: { type: "boolean" },
      "max-sessions": { type: "string" },
      "session-ttl": { type: "string" },
      "max-inflight": { type: "string" },
      "max-inflight-per-client": { type: "string" },
      "trust-proxy": { type: "boolean" },
      "drain-ms": { type: "string" },
      engine: { type: "string" },
      "timeout-ms": { type: "string" },
      "memory-mb": { type: "string" },
      session: { type: "boolean" },
      "session-store": { type: "string" },
      "session-name": { type: "string" },
      redis: { type: "string" },
      "session-lease-ms": { type: "string" },
      "session-wait-ms": { type: "string" },
      "session-quota-mb": { type: "string" },
      "js-workers": { type: "string" },
      "js-max-workers": { type: "string" },
      "python-pool": { type: "string" },
      "python-standby": { type: "string" },
      allow: { type: "string", multiple: true },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const stray = HTTP_ONLY.find((flag) => values[flag] !== undefined);
  if (!values.http && stray) throw new UsageError(`--${stray} needs --http`);
  const engine = oneOf("--engine", values.engine, PYTHON_ENGINES) ?? DEFAULT_PYTHON.engine;
  const port = values.port === undefined ? 0 : values.port === "0" ? 0 : positiveInt("--port", values.port)!;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  if (values.session && !ENGINE_INFO[engine].sessions)
    throw new UsageError(
      `--session needs an engine that keeps state (${PYTHON_ENGINES.filter((e) => ENGINE_INFO[e].sessions).join(", ")}): ${engine} keeps none between calls`,
    );
  if (values.session && values.stateless)
    throw new UsageError(
      "--session cannot be --stateless: for sessions any replica serves, add --redis URL (no --stateless needed); or run it stateful behind a balancer that routes by the Mcp-Session-Id header (sticky)",
    );
  const token = values.token ?? (process.env.WASMCELL_TOKEN || undefined);
  // Over stdio only flags choose a store (WASMCELL_REDIS in a desktop client's environment does not).
  const store = await storeFromFlags(values, values.http === true);
  const leaseMs = positiveInt("--session-lease-ms", values["session-lease-ms"]);
  const waitMs = positiveInt("--session-wait-ms", values["session-wait-ms"]);
  if (values["session-name"] !== undefined && (values.http || !store))
    throw new UsageError(
      "--session-name names a stdio server's stored session: it needs --session-store or --redis, without --http",
    );
  const limits = limitsFromFlags(values);
  const ttlSeconds = positiveInt("--session-ttl", values["session-ttl"]);
  const javascript = javascriptFromFlags(values);
  const pools = pythonFromFlags(values);
  const drainMs =
    values["drain-ms"] === "0" ? 0 : (positiveInt("--drain-ms", values["drain-ms"]) ?? DEFAULT_MCP_HTTP.drainMs);

  // The pool starts on the first Python call, so a machine that cannot run Python still serves JS.
  // Every security event goes to stderr, the server's log (stdout carries the protocol over stdio).
  // The event channel is printed, and tapped for /metrics (engine restarts come from there).
  const events = new EventTap(eventPrinter(io.stderr, true));
  await using sessionStore = store;
  await using sandbox = await createSandbox({
    limits,
    javascript,
    python: { engine, ...pools, prewarm: false },
    ...networkFromFlags(values.allow),
    ...(store ? { sessions: { key: sessionKey(process.env) } } : {}),
    onEvent: events.listener,
  });
  const options = { sandbox, pythonEngine: engine, session: values.session === true };
  if (!values.http) {
    const stdio: StdioServeOptions = { ...options };
    if (sessionStore) stdio.sessionStore = sessionStore;
    if (values["session-name"] !== undefined) stdio.sessionName = values["session-name"];
    if (leaseMs !== undefined) stdio.sessionLeaseMs = leaseMs;
    if (waitMs !== undefined) stdio.sessionWaitMs = waitMs;
    const { closed } = await serveStdio(stdio);
    await Promise.race([closed, untilSignal()]);
    return 0;
  }
  const http: HttpServeOptions = {
    ...options,
    port,
    host: values.host ?? DEFAULT_MCP_HTTP.host,
    stateless: values.stateless === true,
    trustProxy: values["trust-proxy"] === true,
    events,
  };
  if (token !== undefined) http.token = token;
  if (sessionStore) http.sessionStore = sessionStore;
  if (leaseMs !== undefined) http.sessionLeaseMs = leaseMs;
  if (waitMs !== undefined) http.sessionWaitMs = waitMs;
  const maxSessions = positiveInt("--max-sessions", values["max-sessions"]);
  const maxInflight = positiveInt("--max-inflight", values["max-inflight"]);
  const perClient = positiveInt("--max-inflight-per-client", values["max-inflight-per-client"]);
  if (maxSessions !== undefined) http.maxSessions = maxSessions;
  if (ttlSeconds !== undefined) http.sessionTtlMs = ttlSeconds * 1000;
  if (maxInflight !== undefined) http.maxInflight = maxInflight;
  if (perClient !== undefined) http.maxInflightPerClient = perClient;
  const quotaMb = positiveInt("--session-quota-mb", values["session-quota-mb"]);
  if (quotaMb !== undefined) http.sessionQuotaBytes = quotaMb * 1024 * 1024;
  const server = await serveHttp(http);
  const mode = http.stateless ? " (stateless)" : store ? ` (sessions stored in ${store.where})` : "";
  io.stderr.write(`wasmcell mcp listening on ${server.url}${mode}\n`);
  await untilSignal();
  // SIGTERM/SIGINT: stop accepting, let in-flight calls finish within the grace, then exit.
  const { waited, cut } = await server.drain(drainMs);
  io.stderr.write(
    `wasmcell mcp drained: ${waited - cut} calls in flight finished, ${cut} cut at the ${drainMs} ms grace\n`,
  );
  return 0;
}

/**
 * `--session-store DIR` or `--redis URL` (or WASMCELL_REDIS): where stored sessions live, checked
 * before anything starts; undefined without either. Disposable, so the command closes it on exit.
 */
async function storeFromFlags(
  values: {
    session?: boolean;
    "session-store"?: string;
    redis?: string;
    "session-lease-ms"?: string;
    "session-wait-ms"?: string;
  },
  redisFromEnv: boolean,
): Promise<(SessionStore & AsyncDisposable & { where: string }) | undefined> {
  const dir = values["session-store"];
  const redis = values.redis ?? (redisFromEnv ? process.env.WASMCELL_REDIS || undefined : undefined);
  const tuned = values["session-lease-ms"] ?? values["session-wait-ms"];
  if (dir === undefined && redis === undefined) {
    if (tuned !== undefined)
      throw new UsageError("--session-lease-ms and --session-wait-ms need --session-store or --redis");
    return undefined;
  }
  if (dir !== undefined && values.redis !== undefined)
    throw new UsageError("--session-store and --redis are two places for the same sessions: pick one");
  if (!values.session)
    throw new UsageError(`--${dir !== undefined ? "session-store" : "redis"} stores --session sessions: add --session`);
  sessionKey(process.env); // the UsageError naming WASMCELL_SESSION_KEY, before anything starts
  // Loaded only when asked for: a stdio server (what desktop clients launch) never pays for ioredis.
  const store: SessionStore =
    dir !== undefined
      ? new (await import("../stores/disk.ts")).DiskSessionStore({ dir })
      : new (await import("../stores/redis.ts")).RedisSessionStore({
          redis: (await import("../queue/connection.ts")).checkRedisUrl(redis),
        });
  return Object.assign(store, { where: dir !== undefined ? dir : "Redis", [Symbol.asyncDispose]: () => store.close() });
}
