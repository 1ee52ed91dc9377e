#!/usr/bin/env node
// The `wasmcell` command. Exit codes: 0 success, 1 the guest code failed, 2 bad usage, 3 wasmcell could
// not run the code on this machine (an engine or seal layer unavailable, a full queue).

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { InvalidOptionError, WasmcellError } from "../core/errors.ts";
import { doctorCommand } from "./doctor.ts";
import { runCommand } from "./run.ts";
import { setupCommand } from "./setup.ts";
import type * as McpModule from "./mcp.ts";
import { asksForHelp, commandHelp, COMMANDS, EXIT, HELP, UsageError, type Io } from "./usage.ts";
import { packageVersion } from "../core/version.ts";

export async function main(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  const json = rest.includes("--json");
  const named = COMMANDS.find((c) => c === (command === "help" ? rest[0] : command));
  // `wasmcell run --help`, `wasmcell help run`: that command's part of the help, before its flags are
  // parsed (so `--help` is never an unknown option, and a command that would start a server does not).
  if (named && (command === "help" || asksForHelp(rest))) {
    io.stdout.write(commandHelp(named));
    return EXIT.ok;
  }
  try {
    switch (command) {
      case "run":
        return await runCommand(rest, io);
      case "doctor":
        return await doctorCommand(rest, io);
      case "setup":
        return await setupCommand(rest, io);
      case "mcp":
        return await (await loadMcp()).mcpCommand(rest, io);
      case "worker":
        return await (await import("./worker.ts")).workerCommand(rest, io);
      case "--version":
      case "-v":
        io.stdout.write(`${packageVersion()}\n`);
        return EXIT.ok;
      case "help":
        if (rest[0] !== undefined) throw unknownCommand(rest[0]);
        io.stdout.write(HELP);
        return EXIT.ok;
      case undefined:
      case "--help":
      case "-h":
        io.stdout.write(HELP);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw unknownCommand(command);
    }
  } catch (error) {
    const usage = asUsageError(error);
    if (usage) return fail(io, json, EXIT.usage, "usage", usage.name, usage.message, true);
    if (error instanceof WasmcellError)
      return fail(io, json, EXIT.hostFailure, "host", error.name, error.message, false);
    throw error;
  }
}

function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command "${name}"; try ${COMMANDS.slice(0, -1).join(", ")} or ${COMMANDS.at(-1)}`);
}

/** The MCP server (and the SDK under it) loads only for `wasmcell mcp`, so `run` and `doctor` do not pay for it. */
async function loadMcp(): Promise<typeof McpModule> {
  return await import("./mcp.ts");
}

/** Bad flags from parseArgs, our own usage errors, and request fields the front door rejects. */
function asUsageError(error: unknown): UsageError | InvalidOptionError | undefined {
  if (error instanceof UsageError || error instanceof InvalidOptionError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) return new UsageError((error as Error).message);
  return undefined;
}

function fail(io: Io, json: boolean, exit: number, kind: string, name: string, message: string, hint: boolean): number {
  // With --json, scripts still get exactly one JSON object on stdout; the human line goes to stderr.
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { kind, name, message } })}\n`);
  io.stderr.write(`wasmcell: ${message}${hint ? " (wasmcell --help)" : ""}\n`);
  return exit;
}

// Run when executed (node dist/cli/main.js, or the `wasmcell` bin symlink), not when imported by a test.
// (import.meta.main would say this, but the package supports Node 22, which lacks it.)
const invoked = process.argv[1] ? realpathSync(process.argv[1]) : "";
if (invoked === fileURLToPath(import.meta.url)) {
  // Hold the event loop open until the command is done: engines unref idle helper processes (so a
  // library user who forgets close() still exits), but the CLI does wait for its own close().
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const code = await main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
  });
  // The sandbox is closed by now; exit rather than wait on anything a library left referenced — but only
  // once stdout and stderr are flushed: on a pipe, a write the consumer has not read yet is still
  // pending, and exiting would cut it (a --json result over the pipe buffer became invalid JSON).
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  clearInterval(keepAlive);
  process.exit(code);
}

/** Resolves when everything written to `stream` so far has been handed to the OS (or the stream failed). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once("error", () => resolve());
    stream.write("", () => resolve());
  });
}
