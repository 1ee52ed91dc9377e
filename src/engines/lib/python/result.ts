// The untrusted-input side of both Python tiers, in one room. What comes back from a place guest code
// ran — the harness's envelope, the list of files a run wrote, the way a jail ended — is parsed here
// and nowhere else, into the host's own types, field by field and within named caps.
//
// Why everything here is untrusted: the harness runs in the guest's interpreter (Pyodide) or the
// guest's own process (native), so guest code can replace it, patch `json.dumps`, or write its own
// result line. Three rules follow:
// - Error *kinds* that mean "a limit of the host fired" (timeout, memory, stack, denied, crashed,
//   aborted) are never taken from the envelope: only `Observed`, what the host itself saw, makes them. A
//   guest `raise KeyboardInterrupt` is a runtime error unless the host's interrupt really fired, and a
//   RecursionError is always one: raised or hit, it looks the same from here (docs/seal.md, *Error kinds
//   on the Python tiers*).
// - Every string is capped (the cap is named in the text where it cut), every number checked.
// - Every returned path is checked like an input path (relative, normalised, no NUL, no `..`, no
//   duplicates) and the file list against the run's caps; a bad path fails the run as `denied`, files
//   over the caps fail it as `output_limit` (never a silent drop).

import { aborted, outputLimit, timedOut } from "../../../kit/failures.ts";
import { checkRelativePath, normalizePath } from "../../../options/index.ts";
import type { JailExit } from "../../../jail/index.ts";
import { OUTPUT_LIMITS, type GuestError, type Limits, type OutputFile, type OutputLimit } from "../../../core/types.ts";
import { checkReturnedFiles, mimeTypeOf } from "../../../kit/files.ts";

/** Caps on the error fields of an envelope, in characters. */
export const ERROR_FIELD_CAPS = {
  /** `error.name` (a Python class name; `type("A" * 10**7, ...)` is possible). */
  name: 200,
  /** `error.message`. */
  message: 8192,
  /** `error.stack` (the traceback): the *end* is kept, where the failing line is. */
  stack: 32768,
} as const;

/**
 * The kinds a harness may report itself: the ones that describe the guest's code, not a host limit.
 * Not `stack`: the harness would take it from the exception's class, which the guest chooses.
 */
const GUEST_KINDS = new Set(["syntax", "runtime", "output_limit"]);

/** A parsed envelope: the run's value, or its error. Python's `None` (and a statement) is `undefined`. */
export type Envelope = { ok: true; value: unknown } | { ok: false; error: GuestError };

/** What the host observed during the run: the only source of the `timeout` and `memory` kinds. */
export interface Observed {
  /**
   * The host's deadline interrupt was delivered: Pyodide, the sidecar's interrupt fired; native, the
   * host's clock had passed the soft deadline it armed the driver's alarm for.
   */
  interrupted: boolean;
  /** The memory cap refused an allocation (Pyodide: the WASM grow hook or the malloc footprint limit). */
  memoryCapHit: boolean;
}

export const NOTHING_OBSERVED: Observed = { interrupted: false, memoryCapHit: false };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `text` cut to `cap` characters, saying so; `keepEnd` keeps the end (tracebacks). */
export function capField(text: string, cap: number, field: string, keepEnd = false): string {
  if (text.length <= cap) return text;
  const note = `[${field} cut to ${cap} characters]`;
  return keepEnd ? `${note}\n${text.slice(-cap)}` : `${text.slice(0, cap)}… ${note}`;
}

function position(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 1e9 ? v : undefined;
}

/**
 * The harness's envelope (already JSON-parsed) as the host's verdict, or undefined when it is not an
 * envelope at all. `maxResultBytes` is re-checked here: the harness's own check ran in guest code;
 * `timeoutMs` is for the host's own words on an observed timeout (failures.ts's, as every engine's).
 */
export function parseEnvelope(
  raw: unknown,
  observed: Observed,
  limits: Pick<Limits, "timeoutMs" | OutputLimit>,
): Envelope | undefined {
  const { maxResultBytes } = limits;
  if (!isRecord(raw)) return undefined;
  if (raw.ok === true) {
    const kind = raw.valueKind;
    if (kind === "none") return { ok: true, value: undefined };
    if (kind === "repr") {
      if (typeof raw.value !== "string") return undefined;
      return Buffer.byteLength(raw.value) > maxResultBytes + 64
        ? { ok: false, error: outputLimit("maxResultBytes", maxResultBytes, Buffer.byteLength(raw.value)) }
        : { ok: true, value: raw.value };
    }
    if (kind !== "json" || !("value" in raw)) return undefined;
    const bytes = Buffer.byteLength(JSON.stringify(raw.value) ?? "");
    if (bytes > maxResultBytes) return { ok: false, error: outputLimit("maxResultBytes", maxResultBytes, bytes) };
    return { ok: true, value: raw.value };
  }
  if (raw.ok !== false || !isRecord(raw.error)) return undefined;
  const e = raw.error;
  // Over a cap of what the run returns, as the harness (or the driver) counted it in the guest's own
  // process: the host keeps which cap (one it knows) and how much, and words it itself.
  if (e.kind === "output_limit") {
    const limit = OUTPUT_LIMITS.find((l) => l === e.limit) ?? "maxResultBytes";
    const size = typeof e.bytes === "number" && Number.isSafeInteger(e.bytes) && e.bytes >= 0 ? e.bytes : undefined;
    const sized = limit === "maxResultBytes" || limit === "maxDisplayItemBytes";
    return { ok: false, error: outputLimit(limit, limits[limit], sized ? size : undefined) };
  }
  const name = typeof e.name === "string" && e.name ? capField(e.name, ERROR_FIELD_CAPS.name, "error name") : "Error";
  const message = typeof e.message === "string" ? capField(e.message, ERROR_FIELD_CAPS.message, "error message") : "";
  const error: GuestError = { kind: "runtime", name, message };
  if (typeof e.kind === "string" && GUEST_KINDS.has(e.kind)) error.kind = e.kind as GuestError["kind"];
  if (typeof e.stack === "string" && e.stack)
    error.stack = capField(e.stack, ERROR_FIELD_CAPS.stack, "traceback", true);
  const line = position(e.line);
  if (line !== undefined) error.line = line;
  const column = position(e.column);
  if (column !== undefined) error.column = column;
  // The host's verdict: the guest's exception name only says *which* observation it is about.
  if (observed.interrupted && name === "KeyboardInterrupt") {
    error.kind = "timeout";
    error.message = timedOut(limits.timeoutMs, "stopped").message;
  } else if (observed.memoryCapHit && name === "MemoryError") {
    error.kind = "memory";
    error.message = "out of memory (limits.memoryMb)";
  }
  return { ok: false, error };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The files a run reports it wrote, or the error that fails the run. */
export type ParsedFiles = { ok: true; files: OutputFile[] } | { ok: false; error: GuestError };

/**
 * The file list a sidecar or driver returned, checked against the run's caps. A path that is not a
 * plain relative, normalised path inside the working directory (or a duplicate) fails the run as
 * `denied`: a caller doing `writeFile(join(dir, f.path))` must be able to trust every path it gets.
 */
export function parseFiles(raw: unknown, limits: Pick<Limits, "maxFiles" | "maxFileBytes">): ParsedFiles {
  if (!Array.isArray(raw)) return malformed("the file list is not a list");
  const over = checkReturnedFiles({ length: raw.length, bytes: 0 }, limits);
  if (over) return { ok: false, error: over };
  const files: OutputFile[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const f of raw as unknown[]) {
    if (!isRecord(f) || typeof f.path !== "string" || typeof f.data !== "string")
      return malformed("a file entry is not {path, data}");
    const problem =
      checkRelativePath(f.path) ?? (normalizePath(f.path) !== f.path ? "it is not normalised" : undefined);
    if (problem) return badPath(f.path, problem);
    if (seen.has(f.path)) return badPath(f.path, "it is returned twice");
    seen.add(f.path);
    // Base64 is 4/3 of the bytes: a string this long is over the cap before it is decoded.
    if (f.data.length > Math.ceil(((limits.maxFileBytes - total) * 4) / 3) + 4)
      return { ok: false, error: outputLimit("maxFileBytes", limits.maxFileBytes) };
    if (f.data.length % 4 !== 0 || !BASE64.test(f.data)) return malformed("a file's data is not base64");
    const bytes = new Uint8Array(Buffer.from(f.data, "base64"));
    total += bytes.byteLength;
    const overBytes = checkReturnedFiles({ length: files.length + 1, bytes: total }, limits);
    if (overBytes) return { ok: false, error: overBytes };
    files.push({ path: f.path, bytes, mimeType: mimeTypeOf(f.path) });
  }
  return { ok: true, files };
}

function badPath(path: string, problem: string): ParsedFiles {
  return {
    ok: false,
    error: {
      kind: "denied",
      name: "PathError",
      message: `the run returned a file path the host refuses, ${JSON.stringify(path.slice(0, 200))}: ${problem}`,
    },
  };
}

function malformed(what: string): ParsedFiles {
  return { ok: false, error: { kind: "crashed", name: "ProtocolError", message: `malformed result: ${what}` } };
}

/** How a jail ended, as far as the host knows it: the only source of kill-based error kinds. */
export interface ExitContext {
  /** Who ended: "the Python process", "the Python sidecar". */
  who: string;
  /** The host killed it for its deadline (the jail's timer or the host's own kill timer). */
  deadlineKilled: boolean;
  /** The host killed it because the caller's signal aborted the run. */
  aborted: boolean;
  timeoutMs: number;
  /** The memory cap an OOM kill enforced, for the message: "its 64 MB cap (limits.memoryMb, cgroup)". */
  memoryCap: string;
  /** Why it stopped, when the host knows more (a protocol violation, the sidecar's last words). */
  detail?: string;
}

/** The error for a jail that ended without a result: one mapping for both Python tiers. */
export function exitError(exit: JailExit, ctx: ExitContext): GuestError {
  if (ctx.aborted) return aborted();
  if (ctx.deadlineKilled || exit.timedOut) return timedOut(ctx.timeoutMs, "killed");
  if (exit.oomKilled)
    return {
      kind: "memory",
      name: "MemoryError",
      message: `out of memory: ${ctx.who} passed ${ctx.memoryCap} and was killed`,
    };
  if (exit.signal === "SIGXCPU")
    return { kind: "timeout", name: "TimeoutError", message: `${ctx.who} used up its CPU-time limit and was killed` };
  if (exit.signal === "SIGSYS")
    return {
      kind: "denied",
      name: "SeccompError",
      message: "the run made a system call the sandbox forbids and was killed",
    };
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const detail = ctx.detail ? capField(ctx.detail, 1000, "detail", true) : "";
  return {
    kind: "crashed",
    name: "CrashError",
    message: `${ctx.who} ${how} before returning a result${detail ? `: ${detail}` : ""}`,
  };
}
