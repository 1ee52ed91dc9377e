// The host's handle on one sidecar process: start it (cold or from a snapshot), send a run, turn
// what comes back into a RunResult, and enforce the deadline ladder from outside. Everything the
// sidecar says is untrusted data (a guest that broke out of Python owns the sidecar's JS): lines are
// size-bounded, parsed as plain JSON, checked field by field, and output is capped again here.

import { EngineStartError } from "../../errors.ts";
import type { JailedProcess } from "../../jail/index.ts";
import type { ResolvedRequest, ResolvedSeal } from "../../options.ts";
import type { ErrorKind, GuestError, OutputFile, RunResult } from "../../types.ts";
import { ERROR_KINDS } from "../../types.ts";
import { mimeTypeOf } from "../files.ts";
import { truncationMarker } from "../output.ts";
import { launchSidecar } from "./launch.ts";
import { answerFetch, runNetwork } from "./net-host.ts";
import type { InitMessage, ResultMessage, RunMessage } from "./protocol.ts";

/**
 * Time the in-sidecar interrupt gets to end a run before the host kills the process. The interrupt
 * normally lands within milliseconds, but on a loaded machine a sidecar can be descheduled for a few
 * hundred; a kill costs a ~1 s sidecar restart, so an early one only adds load. One second matches
 * the target "hard kill at deadline + 1 s"; code stuck in C (time.sleep, one long call) ends then.
 */
export const KILL_GRACE_MS = 1000;
/** How long a sidecar may take to become ready (a cold load on a loaded 2-core machine is ~3–10 s). */
const START_TIMEOUT_MS = 60_000;
const STDERR_KEEP = 4096;

export interface SidecarStartOptions {
  seal: ResolvedSeal;
  processMemoryMb: number;
  /** A Pyodide memory snapshot to start from (much faster than a cold load), or undefined. */
  snapshot?: Uint8Array;
  /** Keep state across runs (a session) instead of resetting after each run. */
  stateful?: boolean;
}

export interface SidecarTiming {
  /** Host-side: spawn → ready. */
  readyMs: number;
  /** Inside the sidecar: its own start → ready. */
  innerStartMs: number;
  loadMs: number;
  fromSnapshot: boolean;
  phases: Record<string, number>;
}

type State = "starting" | "idle" | "busy" | "dead";

interface Pending {
  id: number;
  request: ResolvedRequest;
  started: number;
  stdout: string;
  stderr: string;
  resolve(result: RunResult): void;
  killedFor?: "timeout" | "aborted";
  network?: ReturnType<typeof runNetwork>;
}

export class SidecarProcess {
  readonly jail: JailedProcess;
  readonly timing: SidecarTiming;
  #state: State = "starting";
  #lines: LineReader;
  #pending: Pending | undefined;
  #nextId = 1;
  #stderrTail = "";
  #afterRun: ((reusable: boolean) => void) | undefined;
  #exitReason: string | undefined;

  private constructor(jail: JailedProcess, lines: LineReader, timing: SidecarTiming) {
    this.jail = jail;
    this.#lines = lines;
    this.timing = timing;
  }

  get alive(): boolean {
    return this.#state !== "dead";
  }

  get idle(): boolean {
    return this.#state === "idle";
  }

  /** Spawns a sidecar and resolves when it is ready to run code. */
  static async start(options: SidecarStartOptions): Promise<SidecarProcess> {
    const t0 = performance.now();
    const jail = await launchSidecar({ seal: options.seal, processMemoryMb: options.processMemoryMb });
    let stderrTail = "";
    const onStderr = (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    };
    jail.child.stderr.on("data", onStderr);
    const lines = new LineReader(jail.child.stdout, 64 << 20);
    const init: InitMessage = {
      t: "init",
      mode: "serve",
      snapshotBytes: options.snapshot?.length ?? 0,
      stateful: options.stateful ?? false,
    };
    jail.child.stdin.write(JSON.stringify(init) + "\n");
    if (options.snapshot) jail.child.stdin.write(options.snapshot);
    const timer = setTimeout(() => jail.kill(), START_TIMEOUT_MS);
    try {
      const ready = await Promise.race([lines.next(), jail.exited.then(() => undefined)]);
      if (!ready || ready.t !== "ready") {
        jail.kill();
        await jail.exited;
        const exit = await jail.exited;
        const why =
          ready?.t === "fatal"
            ? String(ready.message)
            : exit.signal
              ? `killed by ${exit.signal}`
              : `exit code ${exit.code}`;
        throw new EngineStartError(
          `the Pyodide sidecar did not start (${why})${stderrTail ? `: ${stderrTail.trim().slice(-1500)}` : ""}`,
        );
      }
      const sidecar = new SidecarProcess(jail, lines, {
        readyMs: performance.now() - t0,
        innerStartMs: Number(ready.startMs) || 0,
        loadMs: Number(ready.loadMs) || 0,
        fromSnapshot: ready.fromSnapshot === true,
        phases:
          typeof ready.phases === "object" && ready.phases !== null ? (ready.phases as Record<string, number>) : {},
      });
      jail.child.stderr.off("data", onStderr);
      sidecar.#stderrTail = stderrTail;
      sidecar.#listen();
      return sidecar;
    } catch (error) {
      jail.kill();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  #listen(): void {
    this.#state = "idle";
    this.jail.child.stderr.on("data", (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    void this.jail.exited.then(() => this.#onExit());
    void (async () => {
      for (;;) {
        let message: Record<string, unknown> | undefined;
        try {
          message = await this.#lines.next();
        } catch (error) {
          this.#exitReason = `protocol violation: ${(error as Error).message}`;
          this.kill();
          return;
        }
        if (!message) return;
        this.#onMessage(message);
      }
    })();
  }

  #onMessage(m: Record<string, unknown>): void {
    const p = this.#pending;
    // Only what the current run can produce is accepted; anything else means the sidecar no longer
    // follows the protocol (a guest that took over its JS realm), and it is killed.
    const violation = (what: string) => {
      this.#exitReason = `protocol violation: ${what}`;
      this.kill();
    };
    switch (m.t) {
      case "out": {
        if (!p || m.id !== p.id) return violation("output outside a run");
        if ((m.stream !== "stdout" && m.stream !== "stderr") || typeof m.text !== "string")
          return violation("malformed output");
        // The sidecar caps output; this second cap holds even if the sidecar has been subverted.
        const room = p.request.limits.maxOutputBytes + 256 - (p.stdout.length + p.stderr.length);
        if (room <= 0) return;
        const text = m.text.slice(0, room);
        if (m.stream === "stdout") p.stdout += text;
        else p.stderr += text;
        try {
          p.request.onOutput?.({ stream: m.stream, text });
        } catch {
          // A throwing listener is the caller's bug; it must not break the run.
        }
        return;
      }
      case "result":
        if (!p || m.id !== p.id) return violation("a result outside a run");
        this.#finish(p, this.#toResult(p, m as unknown as ResultMessage));
        return;
      case "reset": {
        if (this.#state !== "busy" || p) return violation("a reset outside a run");
        const reusable = typeof m.retire !== "string";
        if (!reusable) this.#exitReason = String(m.retire);
        this.#state = reusable ? "idle" : "dead";
        const cb = this.#afterRun;
        this.#afterRun = undefined;
        cb?.(reusable);
        if (!reusable) this.kill();
        return;
      }
      case "fetch": {
        if (!p || m.id !== p.id) return violation("a network request outside a run");
        void answerFetch(p.network, m, p.request).then((reply) => {
          if (this.#pending === p && this.alive) this.jail.child.stdin.write(JSON.stringify(reply) + "\n");
        });
        return;
      }
      case "fatal":
        this.#exitReason = typeof m.message === "string" ? m.message.slice(0, 1000) : "fatal";
        this.kill();
        return;
      default:
        return violation(`unknown message ${JSON.stringify(m.t).slice(0, 40)}`);
    }
  }

  /**
   * Runs one request. Resolves with the result as soon as the sidecar reports it; `settled` then
   * resolves once the sidecar has reset (true: reusable) or died (false).
   */
  run(request: ResolvedRequest, stateful = false): { result: Promise<RunResult>; settled: Promise<boolean> } {
    if (this.#state !== "idle") throw new Error(`sidecar is ${this.#state}`);
    this.#state = "busy";
    const id = this.#nextId++;
    // The longest honest line is a result carrying the files (base64) and the value, or an output chunk.
    const { limits: l } = request;
    this.#lines.maxLine = Math.ceil((l.maxFileBytes * 4) / 3) + 2 * l.maxResultBytes + l.maxOutputBytes + (1 << 20);
    const settled = new Promise<boolean>((resolve) => {
      this.#afterRun = resolve;
    });
    const result = new Promise<RunResult>((resolveResult) => {
      const resolve = (r: RunResult) => {
        clearTimeout(killTimer);
        request.signal?.removeEventListener("abort", onAbort);
        resolveResult(r);
      };
      const pending: Pending = { id, request, started: performance.now(), stdout: "", stderr: "", resolve };
      pending.network = runNetwork(request, "pyodide");
      this.#pending = pending;
      const files: Record<string, string> = {};
      for (const [path, bytes] of request.files) files[path] = Buffer.from(bytes).toString("base64");
      const { limits } = request;
      const message: RunMessage = {
        t: "run",
        id,
        code: request.code,
        files,
        limits: {
          timeoutMs: limits.timeoutMs,
          memoryMb: limits.memoryMb,
          maxOutputBytes: limits.maxOutputBytes,
          maxResultBytes: limits.maxResultBytes,
          maxFiles: limits.maxFiles,
          maxFileBytes: limits.maxFileBytes,
        },
        truncationMarker: truncationMarker(limits.maxOutputBytes),
      };
      this.jail.child.stdin.write(JSON.stringify(message) + "\n");
      // The last rung of the deadline ladder: the in-sidecar interrupt had its chance.
      const killTimer = setTimeout(() => {
        if (this.#pending !== pending) return;
        pending.killedFor = "timeout";
        this.kill();
      }, limits.timeoutMs + KILL_GRACE_MS);
      const onAbort = () => {
        if (this.#pending !== pending) return;
        pending.killedFor = "aborted";
        this.kill();
      };
      request.signal?.addEventListener("abort", onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
    });
    if (stateful) {
      // A session never resets: the sidecar is reusable as soon as the result is in.
      void result.then(() => {
        if (this.#state === "busy") this.#state = "idle";
        const cb = this.#afterRun;
        this.#afterRun = undefined;
        cb?.(this.alive);
      });
    }
    return { result, settled };
  }

  #finish(p: Pending, result: RunResult): void {
    if (this.#pending !== p) return;
    this.#pending = undefined;
    p.network?.close();
    p.resolve(result);
  }

  #onExit(): void {
    const wasAlive = this.#state !== "dead";
    this.#state = "dead";
    const p = this.#pending;
    if (p) {
      void this.jail.exited.then((exit) => {
        let error: GuestError;
        if (p.killedFor === "timeout") {
          error = {
            kind: "timeout",
            name: "TimeoutError",
            message: `the run passed its ${p.request.limits.timeoutMs} ms deadline (limits.timeoutMs) and its process was killed`,
          };
        } else if (p.killedFor === "aborted") {
          error = { kind: "aborted", name: "AbortError", message: "the run was aborted by the caller's signal" };
        } else if (exit.oomKilled) {
          error = {
            kind: "memory",
            name: "MemoryError",
            message: "the sidecar process ran out of memory and was killed",
          };
        } else if (exit.signal === "SIGSYS") {
          error = {
            kind: "denied",
            name: "SeccompError",
            message: "the run made a system call the sandbox forbids and was killed",
          };
        } else {
          const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
          error = {
            kind: "crashed",
            name: "CrashError",
            message: `the Python sidecar ${how}${this.#exitReason ? ` (${this.#exitReason})` : ""}`,
          };
        }
        this.#finish(p, this.#failure(p, error, 0, false));
      });
    }
    const cb = this.#afterRun;
    this.#afterRun = undefined;
    if (wasAlive || cb) cb?.(false);
  }

  #failure(p: Pending, error: GuestError, outputBytes: number, truncated: boolean): RunResult {
    return {
      ok: false,
      error,
      language: "python",
      stdout: p.stdout,
      stderr: p.stderr,
      outputTruncated: truncated,
      files: [],
      stats: { engine: "pyodide", wallMs: performance.now() - p.started, outputBytes },
    };
  }

  #toResult(p: Pending, m: ResultMessage): RunResult {
    const outputBytes = typeof m.outputBytes === "number" ? m.outputBytes : 0;
    const truncated =
      m.outputTruncated === true || p.stdout.length + p.stderr.length > p.request.limits.maxOutputBytes + 256;
    const envelope = parseEnvelope(m.envelope);
    const stats = {
      engine: "pyodide" as const,
      wallMs: performance.now() - p.started,
      outputBytes,
      ...(typeof m.peakMemoryBytes === "number" ? { peakMemoryBytes: m.peakMemoryBytes } : {}),
    };
    if (!envelope)
      return this.#failure(
        p,
        { kind: "crashed", name: "ProtocolError", message: "the sidecar returned a malformed result" },
        outputBytes,
        truncated,
      );
    if (!envelope.ok) {
      const error = envelope.error;
      // A MemoryError raised because our cap refused growth is a `memory` result whatever the code did with it.
      if (m.memoryCapHit === true && error.kind === "runtime" && error.name === "MemoryError") error.kind = "memory";
      return { ...this.#failure(p, error, outputBytes, truncated), stats };
    }
    const files = parseFiles(m.files, p.request.limits.maxFiles, p.request.limits.maxFileBytes);
    if (typeof m.filesOverLimit === "string" || !files) {
      const message =
        typeof m.filesOverLimit === "string" ? m.filesOverLimit.slice(0, 500) : "the output files are over the limits";
      return {
        ...this.#failure(p, { kind: "output_limit", name: "OutputLimitError", message }, outputBytes, truncated),
        stats,
      };
    }
    return {
      ok: true,
      value: envelope.value,
      language: "python",
      stdout: p.stdout,
      stderr: p.stderr,
      outputTruncated: truncated,
      files,
      stats,
    };
  }

  /** SIGKILLs the sidecar (the whole jail). Idempotent. */
  kill(): void {
    this.jail.kill();
  }

  /** Why the sidecar stopped, when it said. */
  get exitReason(): string | undefined {
    return this.#exitReason;
  }

  get stderrTail(): string {
    return this.#stderrTail;
  }
}

/** Builds a Pyodide memory snapshot in a sealed sidecar (cold load + the imports every run needs). */
export async function buildSnapshot(options: { seal: ResolvedSeal; processMemoryMb: number }): Promise<Uint8Array> {
  const jail = await launchSidecar(options);
  let stderrTail = "";
  jail.child.stderr.on("data", (c: Buffer) => (stderrTail = (stderrTail + c.toString("utf8")).slice(-STDERR_KEEP)));
  const lines = new LineReader(jail.child.stdout, 512 << 20);
  const init: InitMessage = { t: "init", mode: "snapshot", snapshotBytes: 0, stateful: false };
  jail.child.stdin.write(JSON.stringify(init) + "\n");
  const timer = setTimeout(() => jail.kill(), START_TIMEOUT_MS * 2);
  try {
    const header = await lines.next();
    if (!header || header.t !== "snapshot" || typeof header.bytes !== "number") {
      throw new EngineStartError(
        `building the Pyodide snapshot failed${header?.t === "fatal" ? `: ${String(header.message)}` : ""}${stderrTail ? `: ${stderrTail.trim().slice(-1500)}` : ""}`,
      );
    }
    const bytes = await lines.bytes(header.bytes);
    if (!bytes) throw new EngineStartError("building the Pyodide snapshot failed: the sidecar exited early");
    return bytes;
  } finally {
    clearTimeout(timer);
    jail.kill();
    await jail.exited;
  }
}

interface Envelope {
  ok: boolean;
  value?: unknown;
  error: GuestError;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The harness's envelope, checked field by field; plain JSON data only. */
export function parseEnvelope(text: unknown): Envelope | undefined {
  if (typeof text !== "string") return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(raw) || typeof raw.ok !== "boolean") return undefined;
  if (raw.ok) return { ok: true, value: raw.value ?? null, error: { kind: "runtime", name: "", message: "" } };
  const e = raw.error;
  if (!isRecord(e) || typeof e.kind !== "string" || !(ERROR_KINDS as readonly string[]).includes(e.kind))
    return undefined;
  const error: GuestError = {
    kind: e.kind as ErrorKind,
    name: typeof e.name === "string" ? e.name.slice(0, 200) : "Error",
    message: typeof e.message === "string" ? e.message.slice(0, 8192) : "",
  };
  if (typeof e.stack === "string") error.stack = e.stack.slice(0, 32768);
  if (typeof e.line === "number" && Number.isInteger(e.line)) error.line = e.line;
  if (typeof e.column === "number" && Number.isInteger(e.column)) error.column = e.column;
  return { ok: false, error };
}

function parseFiles(raw: unknown, maxFiles: number, maxFileBytes: number): OutputFile[] | undefined {
  if (!Array.isArray(raw)) return [];
  if (raw.length > maxFiles) return undefined;
  const files: OutputFile[] = [];
  let total = 0;
  for (const f of raw as unknown[]) {
    if (!isRecord(f) || typeof f.path !== "string" || typeof f.data !== "string") return undefined;
    const bytes = new Uint8Array(Buffer.from(f.data, "base64"));
    total += bytes.length;
    if (total > maxFileBytes) return undefined;
    files.push({ path: f.path, bytes, mimeType: mimeTypeOf(f.path) });
  }
  return files;
}

/**
 * Reads newline-delimited JSON from a stream, with a bound on a line's size (a subverted sidecar must
 * not make the host buffer without limit), and raw byte runs for the snapshot.
 */
class LineReader {
  #buffer: Buffer = Buffer.alloc(0);
  #ended = false;
  #waiter: (() => void) | undefined;
  #error: Error | undefined;
  /** A line longer than this is a protocol violation (bounds what the host buffers). */
  maxLine: number;

  constructor(stream: NodeJS.ReadableStream, maxLine: number) {
    this.maxLine = maxLine;
    stream.on("data", (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    stream.on("end", () => {
      this.#ended = true;
      this.#wake();
    });
    stream.on("error", () => {
      this.#ended = true;
      this.#wake();
    });
  }

  #wake(): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.();
  }

  #wait(): Promise<void> {
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  async next(): Promise<Record<string, unknown> | undefined> {
    for (;;) {
      if (this.#error) throw this.#error;
      const newline = this.#buffer.indexOf(10);
      if (newline >= 0) {
        const line = this.#buffer.subarray(0, newline).toString("utf8");
        this.#buffer = this.#buffer.subarray(newline + 1);
        const parsed: unknown = JSON.parse(line);
        if (!isRecord(parsed)) throw new Error("a protocol line is not an object");
        return parsed;
      }
      if (this.#buffer.length > this.maxLine) {
        this.#error = new Error(`a protocol line is over ${this.maxLine} bytes`);
        throw this.#error;
      }
      if (this.#ended) return undefined;
      await this.#wait();
    }
  }

  async bytes(n: number): Promise<Uint8Array | undefined> {
    for (;;) {
      if (this.#buffer.length >= n) {
        const out = new Uint8Array(this.#buffer.subarray(0, n));
        this.#buffer = this.#buffer.subarray(n);
        return out;
      }
      if (this.#ended) return undefined;
      await this.#wait();
    }
  }
}
