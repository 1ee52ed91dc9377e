// `wasmcell mcp`: the MCP server over stdio (default) or Streamable HTTP on loopback (--http).
// Engine and limits are the operator's flags, never the model's arguments.

import { parseArgs } from "node:util";
import { serveHttp, serveStdio } from "../adapters/mcp/transports.ts";
import { createSandbox } from "../sandbox.ts";
import type { Limits } from "../types.ts";
import { eventPrinter, networkFromFlags } from "./events.ts";
import { UsageError, oneOf, positiveInt, type Io } from "./usage.ts";

export async function mcpCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      http: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      engine: { type: "string" },
      "timeout-ms": { type: "string" },
      "memory-mb": { type: "string" },
      session: { type: "boolean" },
      allow: { type: "string", multiple: true },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.http && (values.port !== undefined || values.host !== undefined))
    throw new UsageError("--port and --host need --http");
  const engine = oneOf("--engine", values.engine, ["pyodide", "native"] as const) ?? "pyodide";
  const port = values.port === undefined ? 0 : values.port === "0" ? 0 : positiveInt("--port", values.port)!;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  if (values.session && engine === "native")
    throw new UsageError("--session needs --engine pyodide: the native tier keeps no state between calls");
  const limits: Partial<Limits> = {};
  const timeoutMs = positiveInt("--timeout-ms", values["timeout-ms"]);
  const memoryMb = positiveInt("--memory-mb", values["memory-mb"]);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;

  // The pool starts on the first Python call, so a machine that cannot run Python still serves JS.
  // Every security event goes to stderr, the server's log (stdout carries the protocol over stdio).
  await using sandbox = await createSandbox({
    limits,
    python: { engine, pool: 1, prewarm: false },
    ...networkFromFlags(values.allow),
    onEvent: eventPrinter(io.stderr, true),
  });
  const options = { sandbox, pythonEngine: engine, session: values.session === true };
  if (values.http) {
    await using server = await serveHttp({ ...options, port, host: values.host ?? "127.0.0.1" });
    io.stderr.write(`wasmcell mcp listening on ${server.url}\n`);
    await untilSignal();
  } else {
    const { closed } = await serveStdio(options);
    await Promise.race([closed, untilSignal()]);
  }
  return 0;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}
