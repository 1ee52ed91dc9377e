// The MCP tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): a `run_code` call from a client
// that declared the extension in its request's capabilities, still running after `taskAfterMs`, is
// answered with a task (`resultType: "task"`) instead of holding the request open; the run carries on,
// and the client polls `tasks/get` for its result or stops it with `tasks/cancel`. A call that finishes
// sooner is answered as usual. Log and progress notifications stop once a call becomes a task (the
// extension does not carry them yet).
//
// The table is in this process: a task is answered by the server that runs it (behind a balancer,
// route tasks/* by their Mcp-Name header, which carries the task id). A task id is 128 random bits
// and is bound to the credential identity that started it: another client's tasks/get or tasks/cancel
// finds nothing. Finished tasks are kept for `ttlMs`, and the table holds at most `maxTasks`; past
// that a call is answered in its own request rather than as a task.

import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server } from "@modelcontextprotocol/server";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

type Status = "working" | "completed" | "failed" | "cancelled";

interface Entry {
  identity: string;
  status: Status;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
  error?: { code: number; message: string };
  abort: AbortController;
  expires: number;
}

export interface TaskOptions {
  /** A call still running after this long (ms) becomes a task. @defaultValue 1000 */
  taskAfterMs?: number;
  /** How long (ms) a finished task's result is kept for tasks/get. @defaultValue 600000 */
  ttlMs?: number;
  /** Tasks held at once (running and finished). @defaultValue 1024 */
  maxTasks?: number;
}

const POLL_MS = 500;

export class TaskTable {
  readonly #tasks = new Map<string, Entry>();
  readonly taskAfterMs: number;
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(options: TaskOptions = {}) {
    this.taskAfterMs = options.taskAfterMs ?? 1000;
    this.#ttlMs = options.ttlMs ?? 600_000;
    this.#max = options.maxTasks ?? 1024;
  }

  /** Whether a request's client capabilities (its `_meta` envelope) declare the tasks extension. */
  static wanted(capabilities: unknown): boolean {
    const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
  }

  /** Whether there is room for another task. */
  get room(): boolean {
    this.#sweep();
    return this.#tasks.size < this.#max;
  }

  /** Records `work` (running under `abort`) as a task of `identity`; returns the CreateTaskResult. */
  start(identity: string, work: Promise<CallToolResult>, abort: AbortController): Record<string, unknown> {
    const taskId = randomBytes(16).toString("hex");
    const now = new Date().toISOString();
    const entry: Entry = { identity, status: "working", createdAt: now, lastUpdatedAt: now, abort, expires: Infinity };
    this.#tasks.set(taskId, entry);
    const settle = (status: Status, fields: Partial<Entry>) => {
      if (entry.status !== "working") return;
      Object.assign(entry, fields, { status, lastUpdatedAt: new Date().toISOString() });
      entry.expires = Date.now() + this.#ttlMs;
    };
    work.then(
      (result) => settle("completed", { result }),
      (error: unknown) =>
        settle("failed", { error: { code: -32603, message: error instanceof Error ? error.message : String(error) } }),
    );
    return { resultType: "task", ...this.#view(taskId, entry) };
  }

  /** Adds tasks/get and tasks/cancel to `server`, answering for `identity`'s tasks only. */
  serve(server: Server, identity: string): void {
    const params = z.object({ taskId: z.string().max(64) }).loose();
    server.setRequestHandler("tasks/get", { params }, ({ taskId }) => this.#get(identity, taskId));
    server.setRequestHandler("tasks/cancel", { params }, ({ taskId }) => {
      const entry = this.#own(identity, taskId);
      if (entry.status === "working") {
        entry.status = "cancelled";
        entry.lastUpdatedAt = new Date().toISOString();
        entry.expires = Date.now() + this.#ttlMs;
        entry.abort.abort(new Error("cancelled by tasks/cancel"));
      }
      return this.#get(identity, taskId);
    });
  }

  /** Cancels every running task (the server is closing). */
  close(): void {
    for (const entry of this.#tasks.values()) entry.abort.abort(new Error("the server closed"));
    this.#tasks.clear();
  }

  #get(identity: string, taskId: string): Record<string, unknown> {
    const entry = this.#own(identity, taskId);
    const view = this.#view(taskId, entry);
    if (entry.status === "completed") return { ...view, result: entry.result };
    if (entry.status === "failed") return { ...view, error: entry.error };
    return view;
  }

  #own(identity: string, taskId: string): Entry {
    this.#sweep();
    const entry = this.#tasks.get(taskId);
    // Another client's task reads as no task: its existence is not confirmed either.
    if (!entry || entry.identity !== identity)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `no task "${taskId}": unknown, expired, or not this client's`,
      );
    return entry;
  }

  #view(taskId: string, entry: Entry): Record<string, unknown> {
    return {
      taskId,
      status: entry.status,
      createdAt: entry.createdAt,
      lastUpdatedAt: entry.lastUpdatedAt,
      ttlMs: this.#ttlMs,
      pollIntervalMs: POLL_MS,
    };
  }

  #sweep(now = Date.now()): void {
    for (const [id, entry] of this.#tasks) if (entry.expires <= now) this.#tasks.delete(id);
  }
}
