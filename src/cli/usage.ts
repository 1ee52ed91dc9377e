// CLI plumbing shared by the commands: the usage error (exit 2), flag parsers that name the bad flag,
// and the help text.

import { readFileSync } from "node:fs";

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

let version: string | undefined;
export function packageVersion(): string {
  // src/cli and dist/cli are both two levels below the package root.
  version ??= (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  return version;
}

export const HELP = `wasmcell — run JavaScript, TypeScript and Python in sealed WebAssembly sandboxes

Usage:
  wasmcell run <file | -> [options]     run a file (or stdin with -)
  wasmcell run -e CODE [options]        run inline code
  wasmcell doctor [--json]              show which engines and seal layers this machine supports
  wasmcell mcp [--http] [options]       serve the run_code tool over MCP (stdio, or HTTP on loopback)

run options:
  --lang js|ts|python         language (default: from the file extension .js/.mjs/.cjs, .ts/.mts, .py; else js)
  --engine pyodide|native     Python engine (default pyodide)
  --timeout-ms N              wall-clock limit (default 5000)
  --memory-mb N               memory limit (default 128)
  --file PATH | NAME=PATH     put a file in the run's working directory (repeatable)
  --out-dir DIR               write the files the run returns into DIR (never outside it)
  --json                      print exactly one JSON object: ok, value, stdout, stderr, error, stats, files
  --allow HOST[:PORT]         let the code reach this host over HTTP(S) (repeatable; *.domain for subdomains;
                              default: no network)
  --verbose                   print refused requests and limits that fired on stderr

mcp options:
  --http                      serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
  --port N                    HTTP port (default 0: any free port; the URL is printed on stderr)
  --host ADDR                 loopback address to bind (default 127.0.0.1)
  --session                   keep variables between calls (one interpreter per language and client)
  --engine, --timeout-ms, --memory-mb, --allow   as for run; they apply to every tool call
                              (security events are logged on stderr)

Exit codes: 0 success, 1 the code failed, 2 bad usage, 3 wasmcell could not run it here.
`;
