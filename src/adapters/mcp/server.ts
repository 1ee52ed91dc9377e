// The MCP server, on the official TypeScript SDK: the same `run_code` tool as the AI SDK adapter (one
// definition, ../tools/run-code.ts), output files as MCP image/resource content, and the run's
// stdout/stderr streamed while it goes — as `notifications/message` log lines always, and as
// `notifications/progress` when the client asked for progress with a token.
//
// The server outlives anything a guest does: guest failures are results (isError), bad arguments are
// refused by the shared validator before anything runs (also isError), and the sandbox replaces
// engines that die under hostile code.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { ToolOutput } from "../tools/format.ts";
import { toolContent } from "../tools/content.ts";
import { runCodeToolFactory, type RunCodeToolOptions } from "../tools/run-code.ts";
import { LANGUAGES, type Language, type OutputChunk } from "../../core/types.ts";
import { packageVersion } from "../../core/version.ts";
import { FORK_TOOL_NAME, forkTool } from "./fork-tool.ts";
import type { StoredSessions } from "./stored-sessions.ts";

export interface McpServerOptions extends RunCodeToolOptions {
  /**
   * Runs each `run_code` call when its turn comes (the HTTP server's fair queue) and learns how it
   * ended. Without it calls run at once (stdio: one client).
   */
  gate?: CallGate;
}

/** The hooks the HTTP server's admission puts around every tool call. */
export interface CallGate {
  /** Runs `call` when a slot for `language` is free; rejects (with the signal's reason) if aborted first. */
  run<T>(language: string, call: () => Promise<T>, signal: AbortSignal): Promise<T>;
  /** A call finished: its language, `ok` / the guest error kind / `rejected`, and its time. */
  finished(language: string, outcome: string, seconds: number): void;
}

/** How often buffered output is flushed as notifications, so a chatty loop cannot flood the client. */
const FLUSH_MS = 100;

/**
 * The SDK's low-level `Server`, not `McpServer.registerTool`: the tool list carries the exact JSON
 * Schema the AI SDK and raw adapters publish, and arguments are validated by the shared tool itself, so
 * a bad call reads the same on every surface ("invalid input: …; Nothing was run") instead of the
 * SDK's own validation wording.
 */
export function createMcpServer(options: McpServerOptions): Server {
  return mcpServerFactory(options)(options.gate);
}

/**
 * Builds what does not depend on the client once — the `run_code` definition (schema, JSON Schema,
 * description), its tool-list entry and the SDK's JSON Schema validator — and returns a function that
 * makes a server from them for one client, given that client's gate. The HTTP server makes one server
 * per stateless request (per session when stateful), so building these per server cost about a quarter
 * of its busy time under load.
 */
export function mcpServerFactory(
  options: RunCodeToolOptions & { stored?: StoredSessions },
): (gate?: CallGate, sessionId?: string) => Server {
  const stored = options.stored;
  const makeTool = runCodeToolFactory(stored ? { ...options, namedSessions: true } : options);
  const fork = stored ? forkTool(options.languages ?? LANGUAGES) : undefined;
  // A tool made for its definition only; with `session: true` its sessions open on a first call, never here.
  const { name, description, jsonSchema } = makeTool();
  const listed: Tool = {
    name,
    title: "Run code in a wasmcell sandbox",
    description,
    inputSchema: jsonSchema as Tool["inputSchema"],
    annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true, destructiveHint: false },
  };
  // Each `Server` would otherwise build its own Ajv instance (with formats, about 0.1 ms) to check
  // elicitation replies, which this server never asks for. Sharing one is safe while that holds: Ajv
  // keeps every schema object it compiles for the instance's lifetime.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const info = { name: "wasmcell", version: packageVersion() };
  return (gate, sessionId) => {
    const server = new Server(info, { capabilities: { tools: {}, logging: {} }, jsonSchemaValidator });
    // A tool per server: with `session: true` each MCP session (each client connection) gets its own
    // interpreters; with stored sessions they are the stored ones of the session id the request carried.
    const own = stored && sessionId !== undefined ? { stored, id: sessionId } : undefined;
    const runCode = makeTool(own?.stored.runner(own.id));
    const tools = own && fork ? [listed, fork.listed] : [listed];
    // Nobody to tell if closing the tool's sessions fails: the connection is already gone.
    server.onclose = () => void runCode.close().catch(() => undefined);
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const args = request.params.arguments ?? {};
      const forking = own && fork && request.params.name === FORK_TOOL_NAME;
      if (request.params.name !== runCode.name && !forking) {
        const names = tools.map((t) => t.name).join(", ");
        return {
          content: [{ type: "text", text: `unknown tool "${request.params.name}"; available: ${names}` }],
          isError: true,
        };
      }
      const language =
        typeof args.language === "string" && LANGUAGES.includes(args.language as Language) ? args.language : "invalid";
      const started = performance.now();
      let outcome = "rejected";
      const call = async (): Promise<CallToolResult> => {
        if (forking) {
          const result = await fork.call(own.stored, own.id, args);
          outcome = result.isError ? "fork_failed" : "ok";
          return result;
        }
        const stream = new OutputStream((n) => extra.sendNotification(n), request.params._meta?.progressToken);
        try {
          const output = await runCode.call(args, {
            signal: extra.signal,
            onOutput: (c) => stream.push(c),
            onResult: (r) => void (outcome = r.ok ? "ok" : r.error.kind),
          });
          await stream.close();
          return toCallToolResult(output);
        } finally {
          stream.stop();
        }
      };
      if (!gate) return call();
      try {
        // JavaScript and TypeScript share the QuickJS lane; anything invalid fails validation at once.
        return await gate.run(language === "python" ? "python" : "javascript", call, extra.signal);
      } finally {
        gate.finished(language, outcome, (performance.now() - started) / 1000);
      }
    });
    return server;
  };
}

/**
 * MCP content for a tool output: the text, then images, then other files as embedded resources, then
 * the display items' images; their other types as structured content (adapters/tools/content.ts).
 */
export function toCallToolResult(output: ToolOutput): CallToolResult {
  return { ...toolContent(output) };
}

/**
 * Buffers output chunks and sends them at most every FLUSH_MS. `close()` sends what is left and waits
 * for every notification, so all output reaches the client before the tool result does.
 */
class OutputStream {
  readonly #send: (n: ServerNotification) => Promise<void>;
  readonly #progressToken: string | number | undefined;
  #buffer: OutputChunk[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sent: Promise<unknown>[] = [];
  #progress = 0;

  constructor(send: (n: ServerNotification) => Promise<void>, progressToken: string | number | undefined) {
    this.#send = send;
    this.#progressToken = progressToken;
  }

  push(chunk: OutputChunk): void {
    this.#buffer.push(chunk);
    this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  async close(): Promise<void> {
    this.#flush();
    await Promise.all(this.#sent);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #notify(notification: ServerNotification): void {
    // Caught at once: a client that went away must neither fail the run nor leave an unhandled rejection.
    this.#sent.push(this.#send(notification).catch(() => undefined));
  }

  #flush(): void {
    this.stop();
    const chunks = this.#buffer;
    this.#buffer = [];
    for (const stream of ["stdout", "stderr"] as const) {
      const text = chunks
        .filter((c) => c.stream === stream)
        .map((c) => c.text)
        .join("");
      if (!text) continue;
      this.#notify({
        method: "notifications/message",
        params: { level: stream === "stdout" ? "info" : "warning", logger: stream, data: text },
      });
      if (this.#progressToken !== undefined) {
        this.#notify({
          method: "notifications/progress",
          params: { progressToken: this.#progressToken, progress: ++this.#progress, message: text },
        });
      }
    }
  }
}
