// What a model reads back from a run: one short text plus the files and the display items, the same
// for the AI SDK, MCP and raw function calling. Written for a model that has to act on it: the error
// kind and a message it can fix first, then what the code printed, every cut marked as a cut, files
// listed by name and size, and each item it displayed as its text/plain (its images shown as images).

import type { DisplayItem, Limits, OutputFile, OutputLimit, RunResult } from "../../core/types.ts";
import { renderValue } from "./render-value.ts";

/** A file the run wrote, as a model-facing tool returns it. Content is inlined only where useful. */
export interface ToolOutputFile {
  path: string;
  mimeType: string;
  size: number;
  /** Base64 bytes, for images (shown to the model as image content). */
  base64?: string;
  /** UTF-8 text, for small text files (CSV, JSON, plain text). */
  text?: string;
}

/** The model-facing result of one tool call. JSON-serialisable, so it can sit in chat history. */
export interface ToolOutput {
  /** True when the code failed or the input was rejected: the text says why. */
  isError: boolean;
  text: string;
  files: ToolOutputFile[];
  /**
   * What the run displayed, in order (charts, tables, rich values): each bundle as the run returned
   * it, except images over `maxImageBytes`, which are left out of it (the text says so).
   */
  results: DisplayItem[];
}

export interface FormatOptions {
  /**
   * Cap on the whole text, in characters; stdout/stderr/value are cut (and marked) to fit.
   * @defaultValue 8000 (`DEFAULT_FORMAT.maxChars`)
   */
  maxChars: number;
  /**
   * Images up to this size are inlined as base64 (image content).
   * @defaultValue 4194304 (`DEFAULT_FORMAT.maxImageBytes`)
   */
  maxImageBytes: number;
  /**
   * Text files up to this size are inlined as text.
   * @defaultValue 16384 (`DEFAULT_FORMAT.maxInlineTextBytes`)
   */
  maxInlineTextBytes: number;
  /** The limits the run had, so a limit error can name the number. */
  limits: Limits;
}

export { DEFAULT_FORMAT } from "./defaults.ts";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const TEXT_TYPES = /^(text\/|application\/(json|xml|x-ndjson|csv|javascript|typescript|x-python|yaml))/;

export function formatResult(result: RunResult, options: FormatOptions): ToolOutput {
  const head: string[] = [];
  if (result.ok) {
    head.push(`ok (${result.language}, ${Math.round(result.stats.wallMs)} ms)`);
  } else {
    const e = result.error;
    const where =
      e.line !== undefined ? ` (line ${e.line}${e.column !== undefined ? `, column ${e.column}` : ""})` : "";
    head.push(`error: ${e.kind}: ${e.name ? `${e.name}: ` : ""}${e.message}${where}`);
    const hint = hintFor(result, options.limits);
    if (hint) head.push(hint);
  }
  // Budget: the head is short; the value, stack and output share what is left, output last.
  const parts: string[] = [...head];
  let budget = options.maxChars - head.join("\n").length;
  // Python's None comes back as undefined, "no value" (the REPL prints nothing for it), so `print(x)`
  // as the last line does not add a `value: null` the model has to ignore.
  const hasValue = result.ok && result.value !== undefined;
  if (result.ok && hasValue) {
    const value = cut(renderValue(result.value), Math.max(200, Math.floor(budget / 2)), "value");
    parts.push(`value: ${value}`);
    budget -= value.length + 7;
  }
  if (!result.ok && result.error.stack) {
    const stack = cut(result.error.stack.trim(), Math.min(1_500, Math.max(200, Math.floor(budget / 3))), "stack");
    parts.push(`stack:\n${stack}`);
    budget -= stack.length + 7;
  }
  const streams = [
    ["stdout", result.stdout],
    ["stderr", result.stderr],
  ] as const;
  const present = streams.filter(([, text]) => text.length > 0);
  for (const [name, text] of present) {
    const share = Math.max(200, Math.floor(budget / present.length));
    const shown = cut(text.replace(/\n$/, ""), share, name);
    const label = result.outputTruncated
      ? `${name} (cut by the sandbox at ${options.limits.maxOutputBytes} bytes of output):`
      : `${name}:`;
    parts.push(`${label}\n${shown}`);
  }
  const files = result.files.map((f) => toOutputFile(f, options));
  if (files.length > 0) {
    const listed = files.map(
      (f) =>
        `${f.path} (${f.mimeType}, ${formatBytes(f.size)}${f.base64 ? ", shown below" : f.text !== undefined ? ", content below" : ""})`,
    );
    parts.push(`files written: ${listed.join("; ")}`);
    for (const f of files) if (f.text !== undefined) parts.push(`--- ${f.path} ---\n${f.text}`);
  }
  const results = result.results.map((item) => withinImageCap(item, options.maxImageBytes));
  if (results.length > 0) {
    const value = hasValue ? renderValue(result.value) : undefined;
    const share = Math.max(200, Math.floor(budget / (results.length + 1)));
    const lines = results.map((item, i) => {
      const types = Object.keys(item.data).filter((t) => t !== "text/plain");
      const images = types.filter((t) => IMAGE_TYPES.has(t));
      const dropped = Object.keys(result.results[i]?.data ?? {}).filter((t) => !(t in item.data));
      const notes = [
        ...(images.length > 0 ? ["image shown below"] : []),
        ...dropped.map((t) => `${t} over ${formatBytes(options.maxImageBytes)}, not shown`),
      ];
      const listed = [...types, ...dropped];
      const also = listed.length > 0 ? ` [${listed.join(", ")}${notes.length > 0 ? `; ${notes.join("; ")}` : ""}]` : "";
      // The main item's text is the value's, already above.
      const plain = item.data["text/plain"];
      const same = result.ok && (plain === result.value || plain === value);
      const text = item.main && same ? "(the value above)" : plain;
      return `[${i + 1}]${item.main ? " (the last expression)" : ""}${also}\n${cut(text, share, "display text")}`;
    });
    parts.push(`displayed (${results.length}):\n${lines.join("\n")}`);
  }
  if (result.ok && !hasValue && present.length === 0 && files.length === 0 && results.length === 0) {
    parts.push("(no value, no output: end the code with an expression, or print, to see a result)");
  }
  return { isError: !result.ok, text: parts.join("\n"), files, results };
}

/** An item with its images over the inline cap left out (its text/plain stays). */
function withinImageCap(item: DisplayItem, maxImageBytes: number): DisplayItem {
  const keep = Object.entries(item.data).filter(
    ([type, value]) => !IMAGE_TYPES.has(type) || (typeof value === "string" && (value.length * 3) / 4 <= maxImageBytes),
  );
  return keep.length === Object.keys(item.data).length
    ? item
    : { data: Object.fromEntries(keep) as DisplayItem["data"], main: item.main };
}

/** The text for a tool call the sandbox refused before running anything (bad arguments). */
export function formatBadInput(message: string): ToolOutput {
  return {
    isError: true,
    text: `invalid input: ${message}\nNothing was run. Fix the arguments and call again.`,
    files: [],
    results: [],
  };
}

/** What to do about each cap on what a run returns (the failure names the one that fired). */
const OUTPUT_HINTS: Record<OutputLimit, (limits: Limits) => string> = {
  maxResultBytes: (l) =>
    `The value of the last expression is over its ${formatBytes(l.maxResultBytes)} cap. Return a summary, or write the data to a file.`,
  maxFiles: (l) => `The run wrote more than ${l.maxFiles} files. Write fewer (bundle them into one).`,
  maxFileBytes: (l) =>
    `The files the run wrote are over their ${formatBytes(l.maxFileBytes)} cap together. Write less.`,
  maxResults: (l) =>
    `The run displayed more than ${l.maxResults} items. Show fewer figures or tables (combine them into one).`,
  maxDisplayItemBytes: (l) =>
    `One displayed item is over its ${formatBytes(l.maxDisplayItemBytes)} cap. Show a smaller figure or a summary table, or write it to a file.`,
  maxDisplayBytes: (l) =>
    `The displayed items are over their ${formatBytes(l.maxDisplayBytes)} cap together. Show fewer or smaller ones.`,
};

function hintFor(result: RunResult & { ok: false }, limits: Limits): string | undefined {
  switch (result.error.kind) {
    case "timeout":
      return `The run was stopped at its ${limits.timeoutMs} ms time limit. Do less work per call, or avoid infinite loops and unresolved awaits.`;
    case "memory":
      return `The run hit its ${limits.memoryMb} MB memory limit. Use less data at once.`;
    case "stack":
      return "The call stack overflowed (deep or infinite recursion). Use a loop instead.";
    case "output_limit":
      return (
        OUTPUT_HINTS[result.error.limit as OutputLimit]?.(limits) ??
        "A cap on what a run returns was hit. Return or write less."
      );
    case "denied":
      return "The sandbox does not grant this (no network, no host files, no processes).";
    case "crashed":
      return "The engine died running this code; the sandbox replaced it. Simplify the code and retry.";
    default:
      return undefined;
  }
}

function toOutputFile(file: OutputFile, options: FormatOptions): ToolOutputFile {
  const out: ToolOutputFile = { path: file.path, mimeType: file.mimeType, size: file.bytes.byteLength };
  if (IMAGE_TYPES.has(file.mimeType) && file.bytes.byteLength <= options.maxImageBytes) {
    out.base64 = toBase64(file.bytes);
  } else if (TEXT_TYPES.test(file.mimeType) && file.bytes.byteLength <= options.maxInlineTextBytes) {
    out.text = new TextDecoder().decode(file.bytes);
  }
  return out;
}

/** Keeps the head and the tail of a long text and says how much was cut in between. */
export function cut(text: string, max: number, what: string): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - 60);
  const headLen = Math.ceil(keep * 0.6);
  const tailLen = keep - headLen;
  const omitted = text.length - headLen - tailLen;
  return `${text.slice(0, headLen)}\n[… ${omitted} characters of ${what} cut …]\n${tailLen > 0 ? text.slice(-tailLen) : ""}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

function toBase64(bytes: Uint8Array): string {
  // Chunked so a multi-megabyte image does not blow the argument limit of String.fromCharCode.
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
