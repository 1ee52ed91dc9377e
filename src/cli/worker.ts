// `wasmcell worker --redis URL`: a queue worker (wasmcell/queue) with the sandbox built from flags, an
// optional /metrics endpoint, and a graceful drain on SIGTERM/SIGINT: no new job is taken, the jobs in
// flight finish, the process exits 0. Start the same command on as many machines as you like.

import { createServer, type Server } from "node:http";
import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { createSandbox } from "../index.ts";
import { createWorker, type TenantLimits } from "../queue/index.ts";
import { javascriptFromFlags, limitsFromFlags, pythonFromFlags, untilSignal } from "./engine-flags.ts";
import { eventPrinter, networkFromFlags } from "./events.ts";
import { UsageError, positiveInt, type Io } from "./usage.ts";

export async function workerCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      redis: { type: "string" },
      queue: { type: "string" },
      concurrency: { type: "string" },
      "lock-ms": { type: "string" },
      "stalled-ms": { type: "string" },
      "tenant-cap": { type: "string", multiple: true },
      "tenant-rate": { type: "string", multiple: true },
      "metrics-port": { type: "string" },
      "metrics-host": { type: "string" },
      "log-jobs": { type: "boolean" },
      "timeout-ms": { type: "string" },
      "memory-mb": { type: "string" },
      "js-workers": { type: "string" },
      "js-max-workers": { type: "string" },
      "python-pool": { type: "string" },
      "python-standby": { type: "string" },
      allow: { type: "string", multiple: true },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const redis = values.redis ?? process.env.WASMCELL_REDIS;
  if (!redis) throw new UsageError("wasmcell worker needs --redis redis://HOST:6379 (or WASMCELL_REDIS)");
  const limits = limitsFromFlags(values);
  const javascript = javascriptFromFlags(values);
  const pools = pythonFromFlags(values);
  const tenants = tenantFlags(values["tenant-cap"] ?? [], values["tenant-rate"] ?? []);
  const metricsPort = values["metrics-port"] === "0" ? 0 : positiveInt("--metrics-port", values["metrics-port"]);
  const metricsHost = values["metrics-host"] ?? "127.0.0.1";
  const token = process.env.WASMCELL_TOKEN || undefined;
  if (metricsPort !== undefined && !isLoopback(metricsHost) && (token?.length ?? 0) < 16)
    throw new UsageError(`--metrics-host ${metricsHost} is not loopback: set WASMCELL_TOKEN (16+ characters)`);

  const sandbox = await createSandbox({
    limits,
    javascript,
    python: { ...pools, prewarm: false },
    ...networkFromFlags(values.allow),
    onEvent: eventPrinter(io.stderr, true),
  });
  const lockDurationMs = positiveInt("--lock-ms", values["lock-ms"]);
  const stalledIntervalMs = positiveInt("--stalled-ms", values["stalled-ms"]);
  const concurrency = positiveInt("--concurrency", values.concurrency);
  let worker;
  try {
    worker = await createWorker({
      redis,
      sandbox,
      tenants,
      ...(values.queue !== undefined ? { queue: values.queue } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(lockDurationMs !== undefined ? { lockDurationMs } : {}),
      ...(stalledIntervalMs !== undefined ? { stalledIntervalMs } : {}),
      ...(values["log-jobs"] ? { onJob: (e: object) => io.stdout.write(`${JSON.stringify(e)}\n`) } : {}),
      onConnection: (event) =>
        io.stderr.write(
          event.state === "lost"
            ? `wasmcell worker: Redis at ${redisAddress(redis)} unreachable (${event.reason}); retrying with backoff\n`
            : `wasmcell worker: Redis at ${redisAddress(redis)} reachable again\n`,
        ),
    });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  let server: Server | undefined;
  if (metricsPort !== undefined) server = await serveMetrics(metricsHost, metricsPort, token, () => worker.metrics());
  const address = server?.address();
  const where =
    address && typeof address === "object" ? `, metrics on http://${metricsHost}:${address.port}/metrics` : "";
  io.stderr.write(`wasmcell worker ${worker.id}: ${worker.concurrency} at once${where}\n`);
  await untilSignal();
  io.stderr.write("wasmcell worker: draining (no new jobs; the ones in flight finish)\n");
  server?.close();
  await worker.close();
  await sandbox.close();
  io.stderr.write("wasmcell worker: drained\n");
  return 0;
}

/** `--tenant-cap NAME=N` and `--tenant-rate NAME=MAX/MS`, merged into one table. */
function tenantFlags(caps: string[], rates: string[]): Record<string, TenantLimits> {
  const table: Record<string, TenantLimits> = {};
  for (const flag of caps) {
    const m = /^([A-Za-z0-9_.-]{1,128})=(\d+)$/.exec(flag);
    if (!m) throw new UsageError(`--tenant-cap must be NAME=N, got "${flag}"`);
    (table[m[1]!] ??= {}).concurrency = positiveInt("--tenant-cap", m[2])!;
  }
  for (const flag of rates) {
    const m = /^([A-Za-z0-9_.-]{1,128})=(\d+)\/(\d+)$/.exec(flag);
    if (!m) throw new UsageError(`--tenant-rate must be NAME=MAX/MS (e.g. eval=100/1000), got "${flag}"`);
    (table[m[1]!] ??= {}).rate = {
      max: positiveInt("--tenant-rate", m[2])!,
      durationMs: positiveInt("--tenant-rate", m[3])!,
    };
  }
  return table;
}

function serveMetrics(
  host: string,
  port: number,
  token: string | undefined,
  render: () => Promise<string>,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === "/healthz") return void res.writeHead(200).end("ok\n");
    if (req.url !== "/metrics") return void res.writeHead(404).end();
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    render().then(
      (text) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(text),
      () => res.writeHead(503).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** host:port of a redis:// URL, never its password. */
function redisAddress(url: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port || "6379"}`;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}
