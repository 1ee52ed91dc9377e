// The CLI's view of the security event channel: the network flags (--allow) and one line per event
// on stderr. `wasmcell run --verbose` prints refusals and limits; `wasmcell mcp` logs every event
// (stderr is the MCP server's log; stdout carries the protocol).

import type { SandboxEvent } from "../events.ts";
import type { SandboxOptions } from "../options.ts";
import { forTerminal } from "./run.ts";

/** `--allow HOST` (repeatable) → the sandbox's network option (none without the flag). */
export function networkFromFlags(allow: string[] | undefined): Pick<SandboxOptions, "network"> {
  return allow && allow.length > 0 ? { network: { allow } } : {};
}

export function formatEvent(e: SandboxEvent): string {
  switch (e.type) {
    case "egress":
      return e.allowed
        ? `egress allowed: ${e.method} ${e.host}:${e.port} (${e.address ?? "?"}) status ${e.status ?? "none"}, ${e.bytesSent} bytes sent, ${e.bytesReceived} received`
        : `egress denied: ${e.method} ${e.host}:${e.port} (${e.reason ?? "refused"})`;
    case "limit":
      return `limit reached: ${e.limit} = ${e.value}`;
    case "denied":
      return `denied: ${e.message}`;
    case "restart":
      return `engine restarted: ${e.reason}`;
  }
}

/** A listener writing one line per event; `all` false keeps only refusals and limits. */
export function eventPrinter(stderr: NodeJS.WritableStream, all: boolean): (e: SandboxEvent) => void {
  return (e) => {
    if (!all && e.type === "egress" && e.allowed) return;
    stderr.write(forTerminal(stderr, `wasmcell [${e.engine}] ${formatEvent(e)}\n`));
  };
}
