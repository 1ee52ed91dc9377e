// The MCP server, on the official TypeScript SDK (v2): the same `run_code` tool as the AI SDK adapter
// (one definition, ../tools/run-code.ts), output files as MCP image/resource content, and the run's
// stdout/stderr streamed while it goes (output-stream.ts). One factory serves both protocol
// revisions: 2026-07-28 (per-request `_meta`, no connection state: sessions are named by handles the
// server mints, session-ids.ts) and 2025-11-25 (initialize, sessions per connection or per
// Mcp-Session-Id).
//
// The server outlives anything a guest does: guest failures are results (isError), bad arguments are
// refused by the shared validator before anything runs (also isError), and the sandbox replaces
// engines that die under hostile code.

import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  Server,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { ToolOutput } from "../tools/format.ts";
import { toolContent } from "../tools/content.ts";
import { runCodeToolFactory, type RunCodeToolOptions } from "../tools/run-code.ts";
import { LANGUAGES, type Language } from "../../core/types.ts";
import { packageVersion } from "../../core/version.ts";
import { closeTool, FORK_TOOL_NAME, forkTool, type SessionScope } from "./fork-tool.ts";
import { loggedStreams, OutputStream } from "./output-stream.ts";
import type { StoredSessions } from "./stored-sessions.ts";
import { TASKS_EXTENSION, TaskTable } from "./tasks.ts";
import { traceparentOf, withTraceparent } from "./trace.ts";

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

/** Who a server instance serves: the protocol era and the caller's credential (session-ids.ts). */
export interface ServedClient {
  /** `modern`: 2026-07-28 (sessions named by handles); `legacy`: 2025-11-25. @defaultValue "legacy" */
  era?: "legacy" | "modern";
  /** The credential identity handles are bound to. @defaultValue "loopback" */
  identity?: string;
}

/** Where the factory keeps named sessions. */
export interface SessionHomes {
  /** 2025-11-25 sessions kept in a store (per Mcp-Session-Id, or a stdio server's named session). */
  stored?: StoredSessions;
  /** 2026-07-28 sessions, named by handles (the same store as `stored` when there is one). */
  handles?: StoredSessions;
  /** 2026-07-28 long runs as tasks (tasks.ts), for clients that declare the extension. */
  tasks?: TaskTable;
}

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
 * Builds what does not depend on the client once — the `run_code` definitions (schema, JSON Schema,
 * description), their tool-list entries and the SDK's JSON Schema validator — and returns a function
 * that makes a server from them for one client, given that client's gate, its stored session (a
 * 2025-11-25 Mcp-Session-Id, checked by the caller) and its era and credential. The HTTP server makes
 * one server per request (per session when stateful), so building these per server cost about a
 * quarter of its busy time under load.
 */
export function mcpServerFactory(
  options: RunCodeToolOptions & SessionHomes,
): (gate?: CallGate, sessionId?: string, client?: ServedClient) => Server {
  const { stored, handles, tasks } = options;
  const languages = options.languages ?? LANGUAGES;
  const legacy = definition(options, stored ? true : false);
  const modern = options.session && handles ? definition(options, "handles") : legacy;
  const fork = forkTool(languages, false);
  const forkByHandle = forkTool(languages, true);
  const close = closeTool();
  // Each `Server` would otherwise build its own Ajv instance (with formats, about 0.1 ms) to check
  // elicitation replies, which this server never asks for. Sharing one is safe while that holds: Ajv
  // keeps every schema object it compiles for the instance's lifetime.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const info = { name: "wasmcell", version: packageVersion() };
  return (gate, sessionId, client = {}) => {
    const era = client.era ?? "legacy";
    const identity = client.identity ?? "loopback";
    const modernTasks = era === "modern" ? tasks : undefined;
    const capabilities = { tools: {}, logging: {}, ...(modernTasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) };
    const server = new Server(info, { capabilities, jsonSchemaValidator });
    modernTasks?.serve(server, identity);
    // Which sessions this server's calls reach: 2026-07-28 names them by handle in every call; a
    // 2025-11-25 client with stored sessions has its own (the session id the request carried); else,
    // with `session: true`, each server (each connection) gets its own interpreters.
    const byHandle = era === "modern" && options.session === true && handles !== undefined;
    const scope = !byHandle && stored && sessionId !== undefined ? stored.ids.read(identity, sessionId) : undefined;
    const home = byHandle ? handles : scope ? stored : undefined;
    const who: SessionScope = scope ? { identity, scope } : { identity };
    const def = byHandle ? modern : legacy;
    const runCode = def.make(home?.runner(identity, scope));
    const tools = byHandle
      ? [def.listed, forkByHandle.listed, close.listed]
      : scope
        ? [def.listed, fork.listed]
        : [def.listed];
    // Nobody to tell if closing the tool's sessions fails: the connection is already gone.
    server.onclose = () => void runCode.close().catch(() => undefined);
    server.setRequestHandler("tools/list", () => ({ tools }));
    server.setRequestHandler("tools/call", async (request, ctx): Promise<CallToolResult> => {
      const args = request.params.arguments ?? {};
      const name = request.params.name;
      const other = home && tools.some((t) => t.name === name) && name !== runCode.name ? name : undefined;
      if (name !== runCode.name && !other) {
        const names = tools.map((t) => t.name).join(", ");
        return { content: [{ type: "text", text: `unknown tool "${name}"; available: ${names}` }], isError: true };
      }
      const language =
        typeof args.language === "string" && LANGUAGES.includes(args.language as Language) ? args.language : "invalid";
      const started = performance.now();
      let outcome = "rejected";
      const call = async (signal: AbortSignal): Promise<CallToolResult> => {
        if (other && home) {
          const result = await (other === FORK_TOOL_NAME ? (byHandle ? forkByHandle : fork) : close).call(
            home,
            who,
            args,
          );
          outcome = result.isError ? `${other === FORK_TOOL_NAME ? "fork" : "close"}_failed` : "ok";
          return result;
        }
        // 2026-07-28: a call without a handle starts a session, whose handle comes back with the result.
        const minted = byHandle && args.session === undefined ? handles.ids.session(identity) : undefined;
        const session = minted ?? (byHandle && typeof args.session === "string" ? args.session : undefined);
        const stream = new OutputStream(
          (n) => ctx.mcpReq.notify(n),
          ctx.mcpReq._meta?.progressToken,
          loggedStreams(era === "modern" ? ctx.mcpReq.envelope?.[LOG_LEVEL_META_KEY as never] : "all"),
        );
        // The SDK lifts `traceparent` into the envelope on 2026-07-28; a 2025-11-25 request keeps it in `_meta`.
        const traceparent = traceparentOf({
          ...ctx.mcpReq._meta,
          ...(ctx.mcpReq.envelope as Record<string, unknown> | undefined),
        });
        try {
          const output = await runCode.call(minted ? { ...args, session: minted } : args, {
            signal,
            onOutput: (c) => stream.push(c),
            onResult: (r) => void (outcome = r.ok ? "ok" : r.error.kind),
            request: (r) => withTraceparent(r, traceparent),
          });
          await stream.close();
          return withSession(toCallToolResult(output), session, output);
        } finally {
          stream.stop();
        }
      };
      const gated = async (signal: AbortSignal): Promise<CallToolResult> => {
        if (!gate) return call(signal);
        try {
          // JavaScript and TypeScript share the QuickJS lane; anything invalid fails validation at once.
          return await gate.run(language === "python" ? "python" : "javascript", () => call(signal), signal);
        } finally {
          gate.finished(language, outcome, (performance.now() - started) / 1000);
        }
      };
      const requested = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as never];
      if (!modernTasks || name !== runCode.name || !TaskTable.wanted(requested) || !modernTasks.room)
        return gated(ctx.mcpReq.signal);
      return asTask(modernTasks, identity, ctx.mcpReq.signal, gated);
    });
    return server;
  };
}

/**
 * Runs a call that may become a task: answered as usual if it ends within the table's `taskAfterMs`,
 * else answered with a task while it carries on. Until then the request's cancellation stops it; after,
 * only tasks/cancel does (the request is over).
 */
async function asTask(
  tasks: TaskTable,
  identity: string,
  requestSignal: AbortSignal,
  run: (signal: AbortSignal) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const abort = new AbortController();
  const follow = () => abort.abort(requestSignal.reason);
  requestSignal.addEventListener("abort", follow, { once: true });
  const work = run(abort.signal);
  let timer: NodeJS.Timeout | undefined;
  const soon = await Promise.race([
    work.then((result) => ({ result })),
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), tasks.taskAfterMs))),
  ]).finally(() => clearTimeout(timer));
  requestSignal.removeEventListener("abort", follow);
  if (soon) return soon.result;
  // The SDK passes a tools/call result's own resultType through: "task" is the extension's CreateTaskResult.
  return tasks.start(identity, work, abort) as unknown as CallToolResult;
}

/** A `run_code` definition and its tool-list entry, built once per kind of session naming. */
function definition(options: RunCodeToolOptions, named: boolean | "handles") {
  const make = runCodeToolFactory(named ? { ...options, namedSessions: named } : options);
  // A tool made for its definition only; with `session: true` its sessions open on a first call, never here.
  const { name, description, jsonSchema } = make();
  const listed: Tool = {
    name,
    title: "Run code in a wasmcell sandbox",
    description,
    inputSchema: jsonSchema as Tool["inputSchema"],
    annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true, destructiveHint: false },
  };
  return { make, listed };
}

/**
 * The handle of the session a 2026-07-28 call ran in, as `session` in the structured content beside
 * what the result already carries; none when the call was refused before anything ran.
 */
function withSession(result: CallToolResult, session: string | undefined, output: ToolOutput): CallToolResult {
  if (session === undefined || output.text.startsWith("invalid input:")) return result;
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  return { ...result, structuredContent: { ...structured, session } };
}

/**
 * MCP content for a tool output: the text, then images, then other files as embedded resources, then
 * the display items' images; their other types as structured content (adapters/tools/content.ts).
 */
export function toCallToolResult(output: ToolOutput): CallToolResult {
  return { ...toolContent(output) };
}
