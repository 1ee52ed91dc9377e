// The CLI's view of the sandbox's event channel: the network flags (--allow) and one line per event
// on stderr. An engine being built on first use and a missing package library are always said (a
// first run without `wasmcell setup` is never a silent wait); `wasmcell run --verbose` adds refusals
// and limits; `wasmcell mcp` logs every event (stderr is the MCP server's log; stdout carries the
// protocol). --json keeps stdout to one JSON object: these lines go to stderr.

import type { SandboxEvent } from "../core/events.ts";
import type { SandboxOptions } from "../options/index.ts";
import { forTerminal } from "./terminal.ts";

/** `--allow HOST` (repeatable) → the sandbox's network option (none without the flag). */
export function networkFromFlags(allow: string[] | undefined): Pick<SandboxOptions, "network"> {
  return allow && allow.length > 0 ? { network: { allow } } : {};
}

function formatEvent(e: SandboxEvent): string {
  switch (e.type) {
    case "egress":
      return e.allowed
        ? `egress allowed: ${e.method} ${e.host}:${e.port} (${e.address ?? "?"}) status ${e.status ?? "none"}, ` +
            `${e.bytesSent} bytes sent, ${e.bytesReceived} received`
        : `egress denied: ${e.method} ${e.host}:${e.port} (${e.reason ?? "refused"})`;
    case "limit":
      return `limit reached: ${e.limit} = ${e.value}`;
    case "denied":
      return `denied: ${e.message}`;
    case "restart":
      return `engine restarted: ${e.reason}`;
    case "engine.building":
      return (
        "the Python engine snapshot is not built on this machine, so this run starts a cold interpreter " +
        `(a few seconds). \`wasmcell setup\` builds it once (about ${Math.round(e.estimateMs / 1000)} s) ` +
        "and makes every later start fast."
      );
    case "engine.built":
      return e.error ? `building the engine failed: ${e.error}` : `engine built in ${Math.round(e.ms)} ms`;
    case "packages.missing":
      return e.message;
    case "integrity":
      return `integrity check failed${e.file ? ` for ${e.file}` : ""}: ${e.message}`;
    case "cache.evicted":
      return e.message;
    case "session.snapshot":
    case "session.resume":
    case "session.evicted":
    case "session.ended":
      return `${e.type} ${e.session.slice(0, 8)}: ${e.bytes} bytes in ${Math.round(e.ms)} ms${e.error ? ` (${e.error})` : ""}`;
  }
}

/** Events the CLI always prints: a wait the user should hear about. */
const ALWAYS: ReadonlySet<SandboxEvent["type"]> = new Set(["engine.building", "packages.missing", "integrity"]);

/**
 * A listener writing one line per event. `all` true (the MCP server's log) prints everything; false
 * prints engine builds and a missing library always, and refusals and limits only when `verbose`.
 */
export function eventPrinter(stderr: NodeJS.WritableStream, all: boolean, verbose = all): (e: SandboxEvent) => void {
  return (e) => {
    if (!all && !ALWAYS.has(e.type)) {
      if (!verbose) return;
      if (e.type === "egress" && e.allowed) return;
      if (e.type === "engine.built") return;
    }
    stderr.write(forTerminal(stderr, `wasmcell [${e.engine}] ${formatEvent(e)}\n`));
  };
}
