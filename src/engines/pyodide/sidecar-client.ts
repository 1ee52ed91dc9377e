// The host's handle on one sidecar process: start it (cold or from a snapshot), send a run, turn
// what comes back into a RunResult, and enforce the deadline ladder from outside. Everything the
// sidecar says is untrusted data (a guest that broke out of Python owns the sidecar's JS): lines are
// size-bounded, parsed as plain JSON, checked field by field, and output is capped again here.

import { EngineStartError } from "../../core/errors.ts";
import type { JailedProcess } from "../../jail/index.ts";
import type { ResolvedRequest, ResolvedSeal } from "../../options/index.ts";
import type { ErrorKind, GuestError, RunResult } from "../../core/types.ts";
import { ERROR_KINDS } from "../../core/types.ts";
import { truncationMarker } from "../../kit/truncation.ts";
import { capField, ERROR_FIELD_CAPS, exitError, parseEnvelope, parseFiles } from "../lib/python/result.ts";
import { Deadline, GRACE } from "../../kit/deadline.ts";
import { crashed, outputLimit } from "../../kit/failures.ts";
import { DisplayCollector } from "../../kit/display.ts";
import { LineReader } from "./line-reader.ts";
import { launchSidecar, SNAPSHOT_FD, START_TIMEOUT_MS, STDERR_KEEP } from "./launch.ts";
import { answerFetch } from "./net-host.ts";
import { openRunNetwork } from "../../network/open.ts";
import type { RunNetwork } from "../../network/run-network.ts";
import type { InitMessage, LoadMessage, ResultMessage, RunMessage, SaveMessage } from "./protocol.ts";
import { checkedSnapshot, type Snapshot } from "./boot-image.ts";

/** How long a stateless sidecar may take to report its reset after a result (it takes milliseconds). */
const RESET_DEADLINE_MS = 10_000;

export interface SidecarStartOptions {
  seal: ResolvedSeal;
  processMemoryMb: number;
  /** A Pyodide memory snapshot to start from (much faster than a cold load), or undefined. */
  snapshot?: Snapshot | undefined;
  /** Keep state across runs (a session) instead of resetting after each run. */
  stateful?: boolean;
  /** The package library's host directory (mounted read-only), or undefined for the standard library only. */
  library?: string | undefined;
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

/** What a `save` or `load` answered (sessions.ts of the engine turns it into errors). */
export type ControlAnswer =
  { ok: true; record?: Uint8Array; ms: number } | { ok: false; refused: string; retired: boolean; size?: boolean };

interface Control {
  id: number;
  kind: "save" | "load";
  maxBytes: number;
  resolve(answer: ControlAnswer): void;
}

interface Pending {
  id: number;
  request: ResolvedRequest;
  started: number;
  stdout: string;
  stderr: string;
  /** The run's display items, parsed and counted as they arrive. */
  display: DisplayCollector;
  resolve(result: RunResult): void;
  /** The caller's signal killed the sidecar (a deadline kill is the jail's `exited.timedOut`). */
  aborted?: boolean;
  network?: RunNetwork | undefined;
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
  #control: Control | undefined;
  /** How long the sidecar's last reset took (its own measure), for the engine's statistics. */
  lastResetMs: number | undefined;
  /**
   * The sha256 of the engine snapshot this sidecar started from: what its session records are
   * relative to, shared by every sidecar started from that file. Undefined for a cold start, whose
   * checkpoint (hash seed, dict layouts: about half the memory) is its own.
   */
  readonly base: string | undefined;

  private constructor(jail: JailedProcess, lines: LineReader, timing: SidecarTiming, base: string | undefined) {
    this.jail = jail;
    this.#lines = lines;
    this.timing = timing;
    this.base = base;
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
    // Checked again at each launch (a stat, or a re-hash when the file moved): never a changed file.
    const snapshot = options.snapshot && checkedSnapshot(options.snapshot);
    const snapshotFd = snapshot && "fd" in snapshot.source ? snapshot.source.fd : undefined;
    const jail = await launchSidecar({
      seal: options.seal,
      processMemoryMb: options.processMemoryMb,
      ...(options.library ? { library: options.library } : {}),
      ...(snapshotFd !== undefined ? { snapshotFd } : {}),
    });
    let stderrTail = "";
    const onStderr = (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    };
    jail.child.stderr.on("data", onStderr);
    const lines = new LineReader(jail.child.stdout, 64 << 20);
    const init: InitMessage = {
      t: "init",
      mode: "serve",
      snapshotBytes: snapshot?.bytes ?? 0,
      ...(snapshotFd !== undefined ? { snapshotFd: SNAPSHOT_FD } : {}),
      stateful: options.stateful ?? false,
    };
    jail.child.stdin.write(JSON.stringify(init) + "\n");
    if (snapshot && "data" in snapshot.source) jail.child.stdin.write(snapshot.source.data);
    // The jail's own wall-clock kill bounds the start (and, per run, the run: see run()).
    jail.setDeadline(START_TIMEOUT_MS);
    try {
      const ready = await Promise.race([lines.next(), jail.exited.then(() => undefined)]);
      if (!ready || ready.t !== "ready") {
        jail.kill();
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
      const sidecar = new SidecarProcess(
        jail,
        lines,
        {
          readyMs: performance.now() - t0,
          innerStartMs: Number(ready.startMs) || 0,
          loadMs: Number(ready.loadMs) || 0,
          fromSnapshot: ready.fromSnapshot === true,
          phases:
            typeof ready.phases === "object" && ready.phases !== null ? (ready.phases as Record<string, number>) : {},
        },
        ready.fromSnapshot === true ? snapshot?.sha256 : undefined,
      );
      jail.child.stderr.off("data", onStderr);
      sidecar.#stderrTail = stderrTail;
      sidecar.#listen();
      return sidecar;
    } catch (error) {
      jail.kill();
      throw error;
    } finally {
      jail.setDeadline(undefined);
    }
  }

  #listen(): void {
    this.#state = "idle";
    this.jail.child.stderr.on("data", (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    this.jail.exited.then(
      () => this.#onExit(),
      () => this.#onExit(),
    );
    (async () => {
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
        if (message.t === "state") {
          // A record follows the line as raw bytes: read here, bounded, before the next line.
          const c = this.#control;
          if (!c || c.kind !== "save" || message.id !== c.id) {
            this.#exitReason = "protocol violation: a state record nobody asked for";
            this.kill();
            return;
          }
          this.#control = undefined;
          this.#state = "idle";
          const ms = typeof message.ms === "number" && Number.isFinite(message.ms) ? message.ms : 0;
          if (typeof message.refused === "string") {
            const refused = capField(message.refused, 1000, "reason");
            c.resolve({ ok: false, refused, retired: false, ...(message.size === true ? { size: true } : {}) });
            continue;
          }
          const n = message.bytes;
          if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0 || n > c.maxBytes) {
            this.#exitReason = `protocol violation: a state record of ${String(n).slice(0, 20)} bytes (at most ${c.maxBytes})`;
            c.resolve({ ok: false, refused: `the session's record is over ${c.maxBytes} bytes`, retired: true });
            this.kill();
            return;
          }
          const record = await this.#lines.bytes(n);
          if (!record) return;
          c.resolve({ ok: true, record, ms });
          continue;
        }
        this.#onMessage(message);
      }
    })().catch(() => this.kill()); // a reader that fails leaves a sidecar nobody can trust: it goes
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
      case "display": {
        if (!p || m.id !== p.id) return violation("a display item outside a run");
        if (typeof m.item !== "string") return violation("malformed display item");
        let raw: unknown;
        try {
          raw = JSON.parse(m.item);
        } catch {
          raw = undefined;
        }
        // The one parser (kit/display.ts): a bad or over-cap item fails the run with its own words.
        p.display.add(raw);
        return;
      }
      case "result":
        if (!p || m.id !== p.id) return violation("a result outside a run");
        this.#finish(p, this.#toResult(p, m as unknown as ResultMessage));
        return;
      case "reset": {
        if (this.#state !== "busy" || p) return violation("a reset outside a run");
        const reusable = typeof m.retire !== "string";
        if (!reusable) this.#exitReason = capField(String(m.retire), 1000, "reason");
        if (typeof m.ms === "number" && Number.isFinite(m.ms)) this.lastResetMs = m.ms;
        if (reusable) this.jail.setDeadline(undefined);
        this.#state = reusable ? "idle" : "dead";
        const cb = this.#afterRun;
        this.#afterRun = undefined;
        cb?.(reusable);
        if (!reusable) this.kill();
        return;
      }
      case "fetch": {
        if (!p || m.id !== p.id) return violation("a network request outside a run");
        // answerFetch answers every failure as a reply; if it ever threw, the run would wait for an
        // answer that never comes, so the sidecar is killed instead (the run ends, nothing leaks).
        answerFetch(p.network, m, p.request).then(
          (reply) => {
            if (this.#pending === p && this.alive) this.jail.child.stdin.write(JSON.stringify(reply) + "\n");
          },
          () => this.kill(),
        );
        return;
      }
      case "loaded": {
        const c = this.#control;
        if (!c || c.kind !== "load" || m.id !== c.id) return violation("a load answer nobody asked for");
        this.#control = undefined;
        const ms = typeof m.ms === "number" && Number.isFinite(m.ms) ? m.ms : 0;
        if (typeof m.retire === "string") {
          this.#exitReason = capField(m.retire, 1000, "reason");
          c.resolve({ ok: false, refused: this.#exitReason, retired: true });
          this.kill();
          return;
        }
        this.#state = "idle";
        if (typeof m.refused === "string") {
          // Refused before any of it reached the interpreter: the sidecar is still pristine.
          const refused = capField(m.refused, 1000, "reason");
          c.resolve({ ok: false, refused, retired: false, ...(m.size === true ? { size: true } : {}) });
          return;
        }
        c.resolve({ ok: true, ms });
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
    this.#lines.maxLine =
      Math.ceil((l.maxFileBytes * 4) / 3) +
      2 * l.maxResultBytes +
      l.maxOutputBytes +
      // a display frame: the item's JSON text (at most twice the item cap, sidecar/display.ts), escaped again
      4 * l.maxDisplayItemBytes +
      (1 << 20);
    const settled = new Promise<boolean>((resolve) => {
      this.#afterRun = resolve;
    });
    const result = new Promise<RunResult>((resolveResult) => {
      const resolve = (r: RunResult) => {
        // A session is idle now; a stateless sidecar still has its reset to do, bounded too: one
        // that never reports it would otherwise hold its pool slot for good.
        if (this.alive) this.jail.setDeadline(stateful ? undefined : RESET_DEADLINE_MS);
        request.signal?.removeEventListener("abort", onAbort);
        resolveResult(r);
      };
      const pending: Pending = {
        id,
        request,
        started: performance.now(),
        stdout: "",
        stderr: "",
        display: new DisplayCollector(request.limits, request.onResult),
        resolve,
      };
      const deadline = new Deadline(request.limits.timeoutMs, pending.started);
      pending.network = openRunNetwork(request, "pyodide", { deadline });
      this.#pending = pending;
      const files: Record<string, string> = {};
      for (const [path, bytes] of request.files) files[path] = Buffer.from(bytes).toString("base64");
      const { limits } = request;
      const message: RunMessage = {
        t: "run",
        id,
        code: request.code,
        files,
        limits,
        truncationMarker: truncationMarker(limits.maxOutputBytes),
        ...(stateful ? { keep: true } : {}),
      };
      // The last rung of the deadline ladder, on the jail's own wall-clock kill (as the native tier
      // does): the in-sidecar interrupt had its chance. `exited.timedOut` is then the host's verdict.
      this.jail.setDeadline(deadline.left() + GRACE.sidecarKillMs);
      this.jail.child.stdin.write(JSON.stringify(message) + "\n");
      const onAbort = () => {
        if (this.#pending !== pending) return;
        pending.aborted = true;
        this.kill();
      };
      request.signal?.addEventListener("abort", onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
    });
    if (stateful) {
      // A session never resets: the sidecar is reusable as soon as the result is in.
      const done = () => {
        if (this.#state === "busy") this.#state = "idle";
        const cb = this.#afterRun;
        this.#afterRun = undefined;
        cb?.(this.alive);
      };
      result.then(done, done);
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
    const c = this.#control;
    this.#control = undefined;
    c?.resolve({ ok: false, refused: this.#exitReason ?? "the sidecar exited", retired: true });
    const p = this.#pending;
    if (p) {
      this.jail.exited.then(
        (exit) => {
          const error = exitError(exit, {
            who: "the Python sidecar",
            deadlineKilled: exit.timedOut,
            aborted: p.aborted === true,
            timeoutMs: p.request.limits.timeoutMs,
            memoryCap: "its process memory cap",
            ...(this.#exitReason ? { detail: this.#exitReason } : {}),
          });
          this.#finish(p, this.#failure(p, error, 0, false));
        },
        () =>
          this.#finish(
            p,
            this.#failure(p, crashed("the Python sidecar ended and its exit could not be read"), 0, false),
          ),
      );
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
      results: [...p.display.items],
      stats: { engine: "pyodide", wallMs: performance.now() - p.started, outputBytes },
    };
  }

  #toResult(p: Pending, m: ResultMessage): RunResult {
    const { limits } = p.request;
    const outputBytes = typeof m.outputBytes === "number" ? m.outputBytes : 0;
    const truncated = m.outputTruncated === true || p.stdout.length + p.stderr.length > limits.maxOutputBytes + 256;
    const stats = {
      engine: "pyodide" as const,
      wallMs: performance.now() - p.started,
      outputBytes,
      ...(typeof m.peakMemoryBytes === "number" ? { peakMemoryBytes: m.peakMemoryBytes } : {}),
    };
    const fail = (error: GuestError): RunResult => ({ ...this.#failure(p, error, outputBytes, truncated), stats });
    // A failure the sidecar itself saw (a JavaScript error out of WASM, its interrupt, its memory cap).
    if (m.failure !== undefined) return fail(sidecarFailure(m.failure));
    let raw: unknown;
    try {
      raw = typeof m.envelope === "string" ? JSON.parse(m.envelope) : undefined;
    } catch {
      raw = undefined;
    }
    const observed = { interrupted: m.interrupted === true, memoryCapHit: m.memoryCapHit === true };
    const envelope = parseEnvelope(raw, observed, limits);
    if (!envelope)
      return fail({ kind: "crashed", name: "ProtocolError", message: "the sidecar returned a malformed result" });
    // The host's verdict on the items it was sent comes first: what the guest did next (an OSError
    // from the display device it overfilled, a success its display module claimed) follows from it.
    if (m.displayOverLimit === true) p.display.oversized();
    if (p.display.failure) return fail(p.display.failure);
    if (!envelope.ok) return fail(envelope.error);
    if (m.filesOverLimit === "maxFiles" || m.filesOverLimit === "maxFileBytes")
      return fail(outputLimit(m.filesOverLimit, limits[m.filesOverLimit]));
    if (typeof m.filesUnreadable === "string")
      return fail(
        crashed(
          `the sidecar could not read back the files the run wrote: ${capField(m.filesUnreadable, 500, "detail")}`,
        ),
      );
    const files = parseFiles(m.files, limits);
    if (!files.ok) return fail(files.error);
    return {
      ok: true,
      value: envelope.value,
      language: "python",
      stdout: p.stdout,
      stderr: p.stderr,
      outputTruncated: truncated,
      files: files.files,
      results: [...p.display.items],
      stats,
    };
  }

  /**
   * The session state this sidecar holds, as a record (at most `maxBytes`), or why there is none. The
   * record is the sidecar's word: the resume path treats it as untrusted (it is checked in the sidecar
   * that loads it, and proven there).
   */
  save(maxBytes: number, capBytes?: number): Promise<ControlAnswer> {
    const message = (id: number): SaveMessage => ({ t: "save", id, ...(capBytes === undefined ? {} : { capBytes }) });
    return this.#controlOp("save", maxBytes, (id) => JSON.stringify(message(id)) + "\n");
  }

  /**
   * Loads a record into this pristine sidecar; on a failure after any of it was applied the sidecar
   * has retired (nothing half-loaded, `retired`), else it is pristine still. `reseed`: the copy draws a
   * new seed for Python's `random`; `bounds`: the process cap and the run memory cap the load is
   * measured against before it is done (protocol.ts, LoadMessage).
   */
  load(
    record: Uint8Array,
    maxBytes: number,
    reseed: boolean,
    bounds: { capBytes?: number; memoryBytes?: number } = {},
  ): Promise<ControlAnswer> {
    return this.#controlOp("load", maxBytes, (id) => {
      const message: LoadMessage = {
        t: "load",
        id,
        bytes: record.length,
        maxBytes,
        ...bounds,
        ...(reseed ? { reseed } : {}),
      };
      this.jail.child.stdin.write(JSON.stringify(message) + "\n");
      this.jail.child.stdin.write(record);
      return undefined;
    });
  }

  /** The session is done: the sidecar resets to its checkpoint and proves it (true: reusable). */
  end(): Promise<boolean> {
    if (this.#state !== "idle") return Promise.resolve(false);
    this.#state = "busy";
    const settled = new Promise<boolean>((resolve) => (this.#afterRun = resolve));
    this.jail.setDeadline(RESET_DEADLINE_MS);
    this.jail.child.stdin.write(JSON.stringify({ t: "end", id: this.#nextId++ }) + "\n");
    return settled;
  }

  #controlOp(
    kind: Control["kind"],
    maxBytes: number,
    frame: (id: number) => string | undefined,
  ): Promise<ControlAnswer> {
    if (this.#state !== "idle")
      return Promise.resolve({ ok: false, refused: `the sidecar is ${this.#state}`, retired: !this.alive });
    this.#state = "busy";
    const id = this.#nextId++;
    // Bounded like a reset: a sidecar that never answers is killed, and the answer is a failure.
    this.jail.setDeadline(RESET_DEADLINE_MS);
    const answer = new Promise<ControlAnswer>((resolve) => {
      this.#control = { id, kind, maxBytes, resolve };
    });
    const line = frame(id);
    if (line !== undefined) this.jail.child.stdin.write(line);
    return answer.finally(() => {
      if (this.alive) this.jail.setDeadline(undefined);
    });
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

/** A failure the sidecar made itself: its kind is the sidecar's observation, its fields are capped. */
function sidecarFailure(raw: unknown): GuestError {
  const f = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  if (typeof f.kind !== "string" || !(ERROR_KINDS as readonly string[]).includes(f.kind))
    return { kind: "crashed", name: "ProtocolError", message: "the sidecar reported a failure of no known kind" };
  return {
    kind: f.kind as ErrorKind,
    name: typeof f.name === "string" ? capField(f.name, ERROR_FIELD_CAPS.name, "error name") : "Error",
    message: typeof f.message === "string" ? capField(f.message, ERROR_FIELD_CAPS.message, "error message") : "",
  };
}
