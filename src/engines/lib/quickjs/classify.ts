// Failure classification: what the service realm read from a guest exception, plus what the host
// itself observed during the run, turned into a GuestError. Pure functions, tested directly.
//
// The kinds timeout, aborted, memory, stack and denied are the host's verdict: each needs something the
// host observed (its interrupt fired, its memory watch or QuickJS's allocator at the cap, a genuine
// QuickJS InternalError, its module loader refusing an import). A name or message alone — which guest
// code controls (`throw Object.assign(new Error("interrupted"), { name: "InternalError" })`) — only
// ever gives `runtime` (or `syntax`), with the guest's own name and message.

import { aborted, timedOut } from "../../../kit/failures.ts";
import type { ErrorKind, GuestError, Limits } from "../../../core/types.ts";
import { explainError } from "./runtime/errors.ts";
import { ERROR_FIELD_CAPS, SERVICE_FILENAME } from "./service.ts";

/**
 * QuickJS's stack limit is clamped: on quickjs-emscripten 0.32 the host's native stack runs out at
 * roughly 2,500 plain JS frames (~480 KiB of QuickJS stack), and a limit of a few MiB makes QuickJS
 * reject even parsing (its limit underflows the WASM shadow stack). Below the clamp QuickJS's own check
 * fires first for ordinary recursion; C-level recursion that still outruns the host stack is caught as
 * a host RangeError (kind `stack`, module replaced).
 */
const MAX_EFFECTIVE_STACK_KB = 384;
export function effectiveStackKb(requested: number): number {
  return Math.min(requested, MAX_EFFECTIVE_STACK_KB);
}
/** Stack frames kept in a reported error; longer stacks are cut, repeated frames collapsed. */
const MAX_FRAMES = 12;

/** What the service realm's errorInfo reported, bounded field by field (see parseErrorInfo). */
export interface ErrorInfo {
  isError: boolean;
  /** A real error object with the user realm's own InternalError.prototype and no own name. */
  genuine: boolean;
  /** The thrown value was `null` (QuickJS throws null when it cannot even allocate the error). */
  isNull: boolean;
  name: string;
  message: string;
  stack: string;
  line?: number;
  column?: number;
  file?: string;
}

/** What the host saw during the run, independent of anything the guest says. */
export interface Observed {
  /** The kind the host's interrupt stopped the run for, if it did. */
  interrupt: ErrorKind | undefined;
  /** QuickJS's allocator was at (or near) the run's cap when the exception was read. */
  allocatorNearCap: boolean;
  /** Imports the host's module loader refused during this run. */
  refusedImports: readonly string[];
}

export interface Situation {
  limits: Limits;
  /** The user's file name (main.js / main.ts): a SyntaxError there is the user's syntax error. */
  filename: string;
  /** The user's code (explainError names the callee of "not a function" from it). */
  code: string;
  phase: "eval" | "job" | "timer" | "serialize";
}

const bound = (v: unknown, max: number): string => {
  const s = typeof v === "string" ? v : "";
  return s.length > max + 64 ? `${s.slice(0, max)}... [cut, limit ${max}]` : s;
};
const position = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v < 2 ** 31 ? v : undefined;

/** Parses errorInfo's JSON text; every field is typed and bounded again here (the guest shaped it). */
export function parseErrorInfo(text: string | undefined): ErrorInfo {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = text === undefined ? {} : JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
  } catch {
    // malformed: the defaults below describe "an exception that could not be read"
  }
  const info: ErrorInfo = {
    isError: raw.isError === true,
    genuine: raw.genuine === true,
    isNull: raw.isNull === true,
    name: bound(raw.name, ERROR_FIELD_CAPS.name) || "Error",
    message: bound(raw.message, ERROR_FIELD_CAPS.message),
    stack: bound(raw.stack, ERROR_FIELD_CAPS.stack),
  };
  const line = position(raw.line);
  const column = position(raw.column);
  if (line !== undefined) info.line = line;
  if (column !== undefined) info.column = column;
  if (typeof raw.file === "string") info.file = bound(raw.file, ERROR_FIELD_CAPS.name);
  return info;
}

/** The error for a run the host's interrupt stopped (deadline, abort, memory watch). */
export function interruptError(kind: ErrorKind, limits: Limits): GuestError {
  if (kind === "aborted") return aborted();
  if (kind === "memory") return memoryError(limits);
  return timedOut(limits.timeoutMs, "stopped");
}

function memoryError(limits: Limits): GuestError {
  return {
    kind: "memory",
    name: "MemoryError",
    message: `the run used more than its ${limits.memoryMb} MB memory limit (limits.memoryMb); use less data per run`,
  };
}

/** The message QuickJS gives an import the host's loader refused (see Cell's module loader). */
export function refusedImportMessage(name: string): string {
  return `import of '${name}' is not available: the sandbox has no module loader (no import, no require); use the globals it provides`;
}

/** Turns an exception (read by the service realm) and the host's observations into the run's error. */
export function classify(info: ErrorInfo, observed: Observed, at: Situation): GuestError {
  const { limits } = at;
  if (observed.interrupt) return interruptError(observed.interrupt, limits);
  const internal = info.genuine && info.name === "InternalError";
  if ((internal && info.message === "out of memory") || (info.isNull && observed.allocatorNearCap))
    return memoryError(limits);
  if (internal && info.message === "string too long")
    return {
      ...memoryError(limits),
      message: `${memoryError(limits).message}: a string grew past QuickJS's maximum string length`,
    };
  if (internal && info.message === "stack overflow") {
    return {
      kind: "stack",
      name: "RangeError",
      message: `the call stack overflowed (${effectiveStackKb(limits.maxStackKb)} KiB of stack, limits.maxStackKb); look for unbounded recursion`,
      ...location(info, at.filename),
    };
  }
  const refused = observed.refusedImports.find((name) => info.isError && info.message === refusedImportMessage(name));
  if (refused !== undefined) return { kind: "denied", name: "ImportError", message: refusedImportMessage(refused) };
  const kind: ErrorKind =
    at.phase === "eval" && info.isError && info.name === "SyntaxError" && info.file === at.filename
      ? "syntax"
      : "runtime";
  const message =
    at.phase === "serialize"
      ? `while serialising the result: ${info.message}`
      : explainError({
          name: info.name,
          message: info.message,
          code: at.code,
          filename: at.filename,
          stack: info.stack,
        });
  return { kind, name: info.name, message, ...location(info, at.filename) };
}

/** The user's frames (service and host-helper frames dropped) and the first position in the user's file. */
export function location(info: Pick<ErrorInfo, "stack" | "line" | "column">, file: string): Partial<GuestError> {
  const frames = info.stack
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.includes(SERVICE_FILENAME) && !l.includes("wasmcell:"));
  const out: Partial<GuestError> = {};
  if (frames.length) out.stack = trimStack(frames);
  if (info.line !== undefined) {
    out.line = info.line;
    if (info.column !== undefined) out.column = info.column;
    return out;
  }
  const pattern = new RegExp(`${file.replace(/\./g, "\\.")}:(\\d+):(\\d+)`);
  for (const f of frames) {
    const m = pattern.exec(f);
    if (m) {
      out.line = Number(m[1]);
      out.column = Number(m[2]);
      break;
    }
  }
  return out;
}

/** Collapses repeated frames (deep recursion) and keeps the first MAX_FRAMES lines. */
function trimStack(frames: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < frames.length;) {
    let j = i + 1;
    while (j < frames.length && frames[j] === frames[i]) j++;
    out.push(frames[i] ?? "");
    if (j - i > 1) out.push(`    ... the frame above repeated ${j - i - 1} more times`);
    i = j;
  }
  if (out.length > MAX_FRAMES)
    return [...out.slice(0, MAX_FRAMES), `    ... ${out.length - MAX_FRAMES} more frames`].join("\n");
  return out.join("\n");
}
