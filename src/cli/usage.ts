// CLI plumbing shared by the commands: the usage error (exit 2), flag parsers that name the bad flag,
// and the help text — the one place the CLI's usage lives: `wasmcell --help` prints all of it, and
// `wasmcell <command> --help` / `wasmcell help <command>` print that command's part of it (commandHelp).

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

/** Bad usage: an unknown flag, a bad number, a missing file. Exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const EXIT = {
  ok: 0,
  /** The guest code failed (syntax, exception, timeout, memory, …). */
  guestFailure: 1,
  usage: 2,
  /** wasmcell itself could not run the code here (an engine or seal layer unavailable, a full queue). */
  hostFailure: 3,
} as const;

export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} must be a positive whole number, got "${value}"`);
  }
  return Number(value);
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${flag} must be one of ${allowed.join(", ")}, got "${value}"`);
  }
  return value as T;
}

export const HELP = `wasmcell — run JavaScript, TypeScript and Python in sealed WebAssembly sandboxes

Usage:
  wasmcell run <file | -> [options]     run a file (or stdin with -)
  wasmcell run -e CODE [options]        run inline code
  wasmcell setup [options]              install the pinned Python package library and build the engine snapshot
  wasmcell doctor [--json]              show which engines and seal layers this machine supports
  wasmcell mcp [--http] [options]       serve the run_code tool over MCP (stdio, or Streamable HTTP)
  wasmcell worker --redis URL [options] run jobs from a Redis queue (wasmcell/queue); one per machine, any number

run options:
  --lang js|ts|python         language (default: from the file extension .js/.mjs/.cjs, .ts/.mts, .py; else js)
  --engine pyodide|native     Python engine (default pyodide)
  --timeout-ms N              wall-clock limit (default 5000)
  --memory-mb N               memory limit (default 128)
  --file PATH | NAME=PATH     put a file in the run's working directory (repeatable)
  --out-dir DIR               write the files the run returns into DIR (never outside it)
  --session FILE              Python: resume the session saved in FILE (new if missing), run, save it
                              back (needs WASMCELL_SESSION_KEY, at least 32 characters)
  --json                      print exactly one JSON object: ok, value, stdout, stderr, error, stats, files
  --allow HOST[:PORT]         let the code reach this host over HTTP(S) (repeatable; *.domain for subdomains;
                              default: no network)
  --verbose                   print refused requests and limits that fired on stderr

mcp options:
  --http                      serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
  --port N                    HTTP port (default 0: any free port; the URL is printed on stderr)
  --host ADDR                 address to bind (default 127.0.0.1); anything but loopback needs a token
  --token T                   bearer token for /mcp and /metrics (or WASMCELL_TOKEN; at least 16 characters)
  --stateless                 no sessions: any replica answers any request (for a load balancer)
  --max-sessions N            open sessions at once; past it initialize gets 503 + Retry-After (default 128)
  --session-ttl S             seconds a session may idle before it is closed (default 600)
  --max-inflight N            tool calls queued or running at once; past it 503 + Retry-After (default 256)
  --max-inflight-per-client N the same cap per client (default 16)
  --trust-proxy               --stateless: tell clients apart by the balancer's X-Forwarded-For
  --drain-ms N                on SIGTERM, how long in-flight calls may finish (default 25000)
  --session                   keep variables between calls (one interpreter per language and client)
  --session-store DIR         --session: keep sessions on disk, so they survive a restart (stdio too; needs
                              WASMCELL_SESSION_KEY, at least 32 characters)
  --redis URL                 --session: keep sessions in Redis, so any replica serves any session (or
                              WASMCELL_REDIS with --http; needs WASMCELL_SESSION_KEY, the same on every replica)
  --session-name NAME         stdio with --session-store or --redis: the stored session's name; a server
                              started again with the same name continues it (default stdio)
  --session-lease-ms N        stored sessions: a session lock's lease, renewed while a call runs (default 10000)
  --session-wait-ms N         stored sessions: wait this long for a session another call holds, then
                              refuse the call as busy (default 30000)
  --session-quota-mb N        --http with stored sessions: the most MiB one MCP session's records (its
                              languages and forks) take in the store; past it a call's state is not kept
                              (default 256)
  --js-workers N              JavaScript worker threads kept warm (default: the number of cores)
  --js-max-workers N          threads the JavaScript pool may grow to while CPU-bound calls hold the others
                              (default 4 per core, at least --js-workers; about 30 MB each)
  --python-pool N             Pyodide sidecars (default 1; about 200 MB each; native: runs at once)
  --python-standby N          Pyodide sidecars kept beside the pool to replace one a timeout kills
                              at once (default 0; about 200 MB each)
  --engine, --timeout-ms, --memory-mb, --allow   as for run; they apply to every tool call
                              (security events are logged on stderr)

worker options:
  --redis URL                 redis://HOST:6379 the workers and clients share (or WASMCELL_REDIS)
  --queue NAME                queue name (default wasmcell-runs)
  --concurrency N             jobs at once (default: --js-max-workers + the Python pool)
  --lock-ms N                 a job's lock; a dead worker's jobs are retried after it (default 60000;
                              must exceed --timeout-ms by 3000)
  --stalled-ms N              how often to look for a dead worker's jobs (default min(30000, lock / 2))
  --tenant-cap NAME=N         at most N runs of tenant NAME at once, across all workers (repeatable)
  --tenant-rate NAME=MAX/MS   at most MAX runs of tenant NAME start per MS milliseconds (repeatable)
  --metrics-port N            serve Prometheus /metrics and /healthz (0: any free port)
  --metrics-host ADDR         bind address for /metrics (default 127.0.0.1; else WASMCELL_TOKEN is required)
  --log-jobs                  print each run's start and end as a JSON line on stdout
  --timeout-ms, --memory-mb, --allow, --js-workers, --js-max-workers, --python-pool, --python-standby
                              as for mcp; every worker should agree on them, and on --tenant-cap /
                              --tenant-rate, --lock-ms

setup options:
  --from DIR                  take the .deb files from DIR instead of apt-get download (air-gapped machines)
  --cache-dir DIR             install into DIR (default $WASMCELL_CACHE_DIR, else ~/.cache/wasmcell)
  --check                     verify an install (every file's sha256, the snapshot); exit 1 on a problem
  --force                     rebuild even when up to date
  --no-snapshot               install the library only

Exit codes: 0 success, 1 the code failed, 2 bad usage, 3 wasmcell could not run it here.
`;

/** The commands, in the order the help lists them. */
export const COMMANDS = ["run", "setup", "doctor", "mcp", "worker"] as const;
export type CommandName = (typeof COMMANDS)[number];

/**
 * One command's help, cut from HELP so the two cannot drift: its "Usage:" lines, its "<command>
 * options:" section (when it has one) and the exit codes.
 */
export function commandHelp(command: CommandName): string {
  const lines = HELP.split("\n");
  const usage = lines.filter((l) => l.startsWith(`  wasmcell ${command} `) || l === `  wasmcell ${command}`);
  const start = lines.indexOf(`${command} options:`);
  const end = start < 0 ? -1 : lines.indexOf("", start);
  const options = start < 0 ? [] : ["", ...lines.slice(start, end < 0 ? undefined : end)];
  const exit = lines.find((l) => l.startsWith("Exit codes:")) ?? "";
  return [lines[0], "", "Usage:", ...usage, ...options, "", exit, ""].join("\n");
}

/**
 * Whether a command's arguments ask for help: `--help` or `-h` before a bare `--`. An option's value
 * cannot be `--help` (the parser refuses a value that starts with a dash unless it is written
 * `--flag=value`, which is one argument), so this never takes a value for a request for help.
 */
export function asksForHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}
