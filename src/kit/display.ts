// Display items (charts, tables, rich values) as they come back from where guest code ran: the one
// parser every boundary uses (the Python tiers' channels, a QuickJS worker's messages and the guest
// realm's `display`, a queue reply), and the one count of a run's items against its caps.
//
// Everything here is hostile input: a Python guest can write its own frames past the display module,
// a worker thread ran guest code. So a bundle is rebuilt key by key into a fresh object: MIME types
// from an allowlist only, `text/plain` required, text values strings, binary values base64 whose
// decoded head is the format's own signature (a "PNG" that is not one is refused, not passed on to a
// client that renders it), `application/json` plain JSON data. Sizes are counted the same way on
// every boundary (`itemBytes`) and checked against `limits.maxDisplayItemBytes`, `limits.maxResults`
// and `limits.maxDisplayBytes`: a breach is an `output_limit` naming which (kit/failures.ts words it).
// A malformed item is refused with a message saying what is wrong with it (`DisplayError`); the
// runtimes' own display code never sends one, so only a guest writing its own frames meets it.

import type { DisplayBundle, DisplayItem, GuestError, Limits } from "../core/types.ts";
import { outputLimit } from "./failures.ts";

/** MIME types whose value is text (a string). */
export const TEXT_MIME_TYPES = [
  "text/plain",
  "text/html",
  "text/markdown",
  "text/latex",
  "image/svg+xml",
  "application/javascript",
] as const;
/** MIME types whose value is base64 bytes, with the signature their bytes start with. */
const BINARY_SIGNATURES: Record<string, (head: Uint8Array) => boolean> = {
  "image/png": (b) => starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  "image/jpeg": (b) => starts(b, [0xff, 0xd8, 0xff]),
  "image/gif": (b) => starts(b, [0x47, 0x49, 0x46, 0x38]),
  "image/webp": (b) => starts(b, [0x52, 0x49, 0x46, 0x46]) && starts(b.subarray(8), [0x57, 0x45, 0x42, 0x50]),
  "application/pdf": (b) => starts(b, [0x25, 0x50, 0x44, 0x46]),
};
export const BINARY_MIME_TYPES = Object.keys(BINARY_SIGNATURES);
/** Every MIME type a display item may carry; any other key is refused. */
export const DISPLAY_MIME_TYPES: readonly string[] = [...TEXT_MIME_TYPES, ...BINARY_MIME_TYPES, "application/json"];

export type DisplayLimits = Pick<Limits, "maxResults" | "maxDisplayItemBytes" | "maxDisplayBytes">;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Nesting an `application/json` value may have (JSON.stringify recurses on the host's stack). */
const MAX_JSON_DEPTH = 64;

function starts(bytes: Uint8Array, signature: number[]): boolean {
  return bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function depthWithin(value: unknown, depth: number): boolean {
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) return value.every((v) => depthWithin(v, depth + 1));
  if (isRecord(value)) return Object.values(value).every((v) => depthWithin(v, depth + 1));
  return true;
}

/** A parsed item and its size, or why it is refused (an `output_limit` or a `DisplayError`). */
export type ParsedDisplay = { ok: true; item: DisplayItem; bytes: number } | { ok: false; error: GuestError };

function displayError(problem: string): GuestError {
  return { kind: "denied", name: "DisplayError", message: `the run displayed an item the host refuses: ${problem}` };
}

function refused(problem: string): ParsedDisplay {
  return { ok: false, error: displayError(problem) };
}

/** UTF-8 bytes of a string, counted without encoding it (a lone surrogate counts as U+FFFD's 3). */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

function decodeHead(base64: string): Uint8Array {
  const binary = atob(base64.slice(0, 16));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/**
 * One display item as a runtime sent it (`{data: {mime: value}, main?: boolean}`), rebuilt and
 * bounded. `maxBytes`: the item cap (limits.maxDisplayItemBytes).
 */
export function parseDisplayItem(raw: unknown, maxBytes: number): ParsedDisplay {
  if (!isRecord(raw) || !isRecord(raw.data)) return refused("it is not {data: {<MIME type>: value}}");
  if (raw.main !== undefined && typeof raw.main !== "boolean") return refused("its main flag is not a boolean");
  const data: Record<string, unknown> = {};
  let bytes = 0;
  const over = () => bytes > maxBytes;
  const keys = Object.keys(raw.data);
  if (keys.length > DISPLAY_MIME_TYPES.length) return refused(`it has ${keys.length} MIME types`);
  for (const mime of keys) {
    const value = raw.data[mime];
    const shown = JSON.stringify(mime.slice(0, 100));
    if (!DISPLAY_MIME_TYPES.includes(mime))
      return refused(`MIME type ${shown} is not one the host returns (${DISPLAY_MIME_TYPES.join(", ")})`);
    if (mime === "application/json") {
      if (!depthWithin(value, 0)) return refused(`its application/json value is nested over ${MAX_JSON_DEPTH} deep`);
      let text: string | undefined;
      try {
        text = JSON.stringify(value);
      } catch {
        text = undefined;
      }
      if (text === undefined) return refused("its application/json value is not JSON data");
      bytes += utf8Length(text);
      if (over()) return { ok: false, error: outputLimit("maxDisplayItemBytes", maxBytes, bytes) };
      data[mime] = JSON.parse(text) as unknown;
      continue;
    }
    if (typeof value !== "string") return refused(`the value of ${shown} is not a string`);
    bytes += utf8Length(value);
    if (over()) return { ok: false, error: outputLimit("maxDisplayItemBytes", maxBytes, bytes) };
    const signature = BINARY_SIGNATURES[mime];
    if (signature) {
      if (value.length % 4 !== 0 || !BASE64.test(value)) return refused(`its ${mime} value is not base64`);
      if (!signature(decodeHead(value))) return refused(`its ${mime} value does not start with the ${mime} signature`);
    }
    data[mime] = value;
  }
  if (typeof data["text/plain"] !== "string") return refused("it has no text/plain");
  return { ok: true, item: { data: data as DisplayBundle, main: raw.main === true }, bytes };
}

/**
 * A run's display items as they arrive: each parsed, counted against the run's caps, kept and handed
 * to the caller's `onResult` (after the caps, in order). The first problem stops the collection and
 * stays as `failure`: the run ends with it.
 */
export class DisplayCollector {
  readonly items: DisplayItem[] = [];
  failure: GuestError | undefined;
  #bytes = 0;
  readonly #limits: DisplayLimits;
  readonly #onResult: ((item: DisplayItem) => void) | undefined;

  constructor(limits: DisplayLimits, onResult?: (item: DisplayItem) => void) {
    this.#limits = limits;
    this.#onResult = onResult;
  }

  /** An item too large to even read (a line past every honest one's length): the item cap fired. */
  oversized(): void {
    this.failure ??= outputLimit("maxDisplayItemBytes", this.#limits.maxDisplayItemBytes);
  }

  /** Takes one item as a runtime sent it; returns the failure when it (or an earlier one) broke the run. */
  add(raw: unknown): GuestError | undefined {
    if (this.failure) return this.failure;
    const { maxResults, maxDisplayItemBytes, maxDisplayBytes } = this.#limits;
    if (this.items.length >= maxResults) return (this.failure = outputLimit("maxResults", maxResults));
    const parsed = parseDisplayItem(raw, maxDisplayItemBytes);
    if (!parsed.ok) return (this.failure = parsed.error);
    if (parsed.item.main && this.items.some((i) => i.main))
      return (this.failure = displayError("a second main result"));
    this.#bytes += parsed.bytes;
    if (this.#bytes > maxDisplayBytes) return (this.failure = outputLimit("maxDisplayBytes", maxDisplayBytes));
    this.items.push(parsed.item);
    try {
      this.#onResult?.(parsed.item);
    } catch {
      // A throwing listener is the caller's bug; it must not break the run.
    }
    return undefined;
  }
}

/** A whole list of items (a worker's answer, a queue reply) within the caps, or why not. */
export function parseDisplayItems(
  raw: unknown,
  limits: DisplayLimits,
): { ok: true; items: DisplayItem[] } | { ok: false; error: GuestError } {
  if (!Array.isArray(raw)) return { ok: false, error: displayError("the display items are not a list") };
  const collector = new DisplayCollector(limits);
  for (const item of raw as unknown[]) {
    const failure = collector.add(item);
    if (failure) return { ok: false, error: failure };
  }
  return { ok: true, items: collector.items };
}
