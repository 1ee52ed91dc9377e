// What `runCode` hands back, in the shape `@e2b/code-interpreter` users know (`Execution`, `Result`,
// `Logs`, `ExecutionError`, `OutputMessage`), made from wasmcell's own result. The display items it
// maps were parsed and bounded where they came back from the guest (the engines' parsers): this file
// only renames MIME keys to E2B's fields and keeps a field only when it has the type E2B gives it.

import { inspect } from "node:util";
import type { DisplayBundle, DisplayItem, ErrorKind, GuestError, Language, Limits } from "../../core/types.ts";

/** One chunk of stdout or stderr as it was written (E2B's `OutputMessage`). */
export class OutputMessage {
  /** The text written (a chunk: it may hold several lines or part of one). */
  readonly line: string;
  /** When the host saw it: Unix epoch milliseconds × 1000, as E2B's client stamps it. */
  readonly timestamp: number;
  /** True for stderr. */
  readonly error: boolean;

  constructor(line: string, timestamp: number, error: boolean) {
    this.line = line;
    this.timestamp = timestamp;
    this.error = error;
  }

  toString(): string {
    return this.line;
  }
}

/**
 * The run's failure (E2B's `ExecutionError`): `name` is the exception's class (`NameError`,
 * `TypeError`; for the host's verdicts the name wasmcell gives them, as `TimeoutError`), `value` its
 * message, `traceback` the traceback in the user's code. `kind` and `limit` are wasmcell's verdict
 * (`GuestError`): what kind of failure the host saw, and which limit fired, never taken from the guest.
 */
export class ExecutionError {
  readonly name: string;
  readonly value: string;
  readonly traceback: string;
  readonly kind: ErrorKind;
  readonly limit?: keyof Limits;

  constructor(name: string, value: string, traceback: string, kind: ErrorKind, limit?: keyof Limits) {
    this.name = name;
    this.value = value;
    this.traceback = traceback;
    this.kind = kind;
    if (limit !== undefined) this.limit = limit;
  }

  static from(error: GuestError): ExecutionError {
    return new ExecutionError(
      error.name,
      error.message,
      error.stack ?? `${error.name}: ${error.message}`,
      error.kind,
      ...(error.limit === undefined ? [] : [error.limit]),
    );
  }
}

/** E2B's fields and the MIME type each is read from. */
const FIELDS = {
  text: "text/plain",
  html: "text/html",
  markdown: "text/markdown",
  svg: "image/svg+xml",
  png: "image/png",
  jpeg: "image/jpeg",
  pdf: "application/pdf",
  latex: "text/latex",
  javascript: "application/javascript",
} as const;
/** Keys E2B's kernel sends besides the MIME types: a DataFrame's data, a chart's data. */
const E2B_DATA = "e2b/data";
const E2B_CHART = "e2b/chart";
const JSON_TYPE = "application/json";
const KNOWN = new Set<string>([...Object.values(FIELDS), JSON_TYPE, E2B_DATA, E2B_CHART]);

/**
 * One thing the code displayed (E2B's `Result`): a chart, a table, an image, the last expression's
 * value. Text formats are strings, `png`/`jpeg`/`pdf` base64 strings, `json` the plain data (as E2B's
 * kernel sends it at run time), `data` and `chart` plain objects when the bundle carries E2B's
 * `e2b/data` / `e2b/chart` keys; every other MIME type of the bundle is in `extra`, and `raw` is
 * the bundle itself.
 */
export class Result {
  readonly text?: string;
  readonly html?: string;
  readonly markdown?: string;
  readonly svg?: string;
  readonly png?: string;
  readonly jpeg?: string;
  readonly pdf?: string;
  readonly latex?: string;
  readonly json?: unknown;
  readonly javascript?: string;
  readonly data?: Record<string, unknown>;
  readonly chart?: Record<string, unknown>;
  readonly extra: Record<string, unknown>;
  readonly raw: DisplayBundle;
  readonly isMainResult: boolean;

  constructor(bundle: DisplayBundle, isMainResult: boolean) {
    const fields: Partial<Record<keyof typeof FIELDS, string>> = {};
    for (const [field, mime] of Object.entries(FIELDS) as [keyof typeof FIELDS, string][]) {
      const value = bundle[mime];
      if (typeof value === "string") fields[field] = value;
    }
    Object.assign(this, fields);
    if (bundle[JSON_TYPE] !== undefined) this.json = bundle[JSON_TYPE];
    const data = bundle[E2B_DATA];
    if (isPlainObject(data)) this.data = data;
    const chart = bundle[E2B_CHART];
    if (isPlainObject(chart)) this.chart = chart;
    this.extra = {};
    // Defined, not assigned: a key named __proto__ must stay a key, never become extra's prototype.
    for (const [key, value] of Object.entries(bundle))
      if (!KNOWN.has(key))
        Object.defineProperty(this.extra, key, { value, enumerable: true, writable: true, configurable: true });
    this.raw = bundle;
    this.isMainResult = isMainResult;
  }

  /** The formats this result has besides `text`, in E2B's order, then `extra`'s MIME types. */
  formats(): string[] {
    const out: string[] = [];
    for (const field of ["html", "markdown", "svg", "png", "jpeg", "pdf", "latex", "json", "javascript"] as const)
      if (this[field] !== undefined) out.push(field);
    if (this.data !== undefined) out.push("data");
    if (this.chart !== undefined) out.push("chart");
    out.push(...Object.keys(this.extra));
    return out;
  }

  toJSON(): Record<string, unknown> {
    return {
      text: this.text,
      html: this.html,
      markdown: this.markdown,
      svg: this.svg,
      png: this.png,
      jpeg: this.jpeg,
      pdf: this.pdf,
      latex: this.latex,
      json: this.json,
      javascript: this.javascript,
      ...(this.data === undefined ? {} : { data: this.data }),
      ...(this.chart === undefined ? {} : { chart: this.chart }),
      ...(Object.keys(this.extra).length > 0 ? { extra: this.extra } : {}),
      isMainResult: this.isMainResult,
    };
  }
}

/** A wasmcell display item as an E2B result. */
export function toResult(item: DisplayItem): Result {
  return new Result(item.data, item.main);
}

/** What the code printed, chunk by chunk as it was written (E2B's `Logs`). */
export interface Logs {
  stdout: string[];
  stderr: string[];
}

/** One `runCode` (E2B's `Execution`). */
export class Execution {
  /** What the code displayed, in order; the last expression's value is the one `isMainResult`. */
  results: Result[];
  logs: Logs;
  /** Set when the run failed (an exception, a syntax error, a limit the host enforced). */
  error?: ExecutionError;
  /** How many runs this context has had, this one included. */
  executionCount?: number;

  constructor(
    results: Result[] = [],
    logs: Logs = { stdout: [], stderr: [] },
    error?: ExecutionError,
    executionCount?: number,
  ) {
    this.results = results;
    this.logs = logs;
    if (error !== undefined) this.error = error;
    if (executionCount !== undefined) this.executionCount = executionCount;
  }

  /** The main result's text: the last expression's value as the interpreter shows it. */
  get text(): string | undefined {
    return this.results.find((r) => r.isMainResult)?.text;
  }

  toJSON(): { results: Result[]; logs: Logs; error: ExecutionError | undefined } {
    return { results: this.results, logs: this.logs, error: this.error };
  }
}

/**
 * The main result for a run whose engine gave no main display item but a value (the JavaScript
 * engine's last expression; any engine before display items are filled): `text/plain` as the
 * language's interpreter would show it. A top-level string is shown without quotes in both
 * languages: a Python value that is not JSON comes back as its `repr()` string, which must not be
 * quoted again, and E2B's JavaScript kernel shows strings bare.
 */
export function valueResult(value: unknown, language: Language): Result | undefined {
  if (value === undefined || (language === "python" && value === null)) return undefined;
  const text =
    typeof value === "string"
      ? value
      : language === "python"
        ? pythonRepr(value, 0)
        : inspect(value, { depth: 4, maxArrayLength: 100, maxStringLength: 10_000, breakLength: 80 });
  return new Result({ "text/plain": text }, true);
}

/** A JSON-shaped Python value as Python shows it (`True`, `None`, `'a'`, `{'k': 1}`). */
function pythonRepr(value: unknown, depth: number): string {
  if (depth > 32) return "...";
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return String(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return pythonString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pythonRepr(v, depth + 1)).join(", ")}]`;
  if (isPlainObject(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonString(k)}: ${pythonRepr(v, depth + 1)}`)
      .join(", ")}}`;
  return inspect(value);
}

function pythonString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s
    .replace(/\\/g, "\\\\")
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t")
    .replaceAll(quote, `\\${quote}`);
  return `${quote}${body}${quote}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
