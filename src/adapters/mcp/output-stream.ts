// A run's stdout/stderr streamed to the client while it goes: `notifications/message` log lines and,
// when the request carried a progress token, `notifications/progress`. Log lines go out only when the
// client asked for them: a 2026-07-28 request says so with the log level in its `_meta`; a 2025-11-25
// client gets them as it always did (its `logging/setLevel` is the SDK's to honour).

import type { LoggingLevel, ServerNotification } from "@modelcontextprotocol/server";
import type { OutputChunk } from "../../core/types.ts";

/** How often buffered output is flushed as notifications, so a chatty loop cannot flood the client. */
const FLUSH_MS = 100;

/** RFC 5424 severities as MCP names them, least severe first. */
const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** The level each stream's lines are sent at. */
const STREAM_LEVEL = { stdout: "info", stderr: "warning" } as const;

/**
 * Which streams' log lines a request asked for: `level` is the request's log level (2026-07-28
 * `_meta`), `undefined` when it named none (no log lines), or "all" (2025-11-25: every line).
 */
export function loggedStreams(level: unknown): ReadonlySet<"stdout" | "stderr"> {
  if (level === "all") return new Set(["stdout", "stderr"]);
  const floor = LEVELS.indexOf(level as LoggingLevel);
  if (floor < 0) return new Set();
  return new Set((["stdout", "stderr"] as const).filter((s) => LEVELS.indexOf(STREAM_LEVEL[s]) >= floor));
}

/**
 * Buffers output chunks and sends them at most every FLUSH_MS. `close()` sends what is left and waits
 * for every notification, so all output reaches the client before the tool result does.
 */
export class OutputStream {
  readonly #send: (n: ServerNotification) => Promise<void>;
  readonly #progressToken: string | number | undefined;
  readonly #logged: ReadonlySet<string>;
  #buffer: OutputChunk[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sent: Promise<unknown>[] = [];
  #progress = 0;

  constructor(
    send: (n: ServerNotification) => Promise<void>,
    progressToken: string | number | undefined,
    logged: ReadonlySet<"stdout" | "stderr">,
  ) {
    this.#send = send;
    this.#progressToken = progressToken;
    this.#logged = logged;
  }

  /** Whether anything would be sent: without a reader, output is not buffered at all. */
  get wanted(): boolean {
    return this.#progressToken !== undefined || this.#logged.size > 0;
  }

  push(chunk: OutputChunk): void {
    if (!this.wanted) return;
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
      if (this.#logged.has(stream)) {
        this.#notify({
          method: "notifications/message",
          params: { level: STREAM_LEVEL[stream], logger: stream, data: text },
        });
      }
      if (this.#progressToken !== undefined) {
        this.#notify({
          method: "notifications/progress",
          params: { progressToken: this.#progressToken, progress: ++this.#progress, message: text },
        });
      }
    }
  }
}
