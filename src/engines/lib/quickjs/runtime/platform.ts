// The host side of the guest runtime: the few things the guest cannot do itself (randomness, hashing,
// the WHATWG URL parser, ICU), as synchronous calls that take and return plain data. Nothing here
// returns a host object: every answer is a string, a number or fresh bytes the installer copies into
// the guest. Every input is bounded before it is used; every call is counted per context.
//
// Portable on purpose (no node: imports): globalThis.crypto, URL, URLSearchParams and Intl exist in
// Node, Deno, Bun, Workers and browsers; hashing uses @noble/hashes (synchronous, unlike WebCrypto).

import { hmac } from "@noble/hashes/hmac.js";
import { sha1 } from "@noble/hashes/legacy.js";
import { sha256, sha384, sha512 } from "@noble/hashes/sha2.js";

/** Calls one context may make into the host's implementations (sessions count across their runs). */
const MAX_PLATFORM_CALLS = 1_000_000;
/** Bytes one hashing call may take (the run's memory cap bounds it further). */
export const MAX_HASH_BYTES = 64 * 1024 * 1024;
/** getRandomValues' own limit (the Web Crypto spec's QuotaExceededError bound). */
const MAX_RANDOM_BYTES = 65_536;
/** Characters a URL, a form body or an Intl argument list may have. */
export const MAX_TEXT = 1024 * 1024;
/**
 * Characters a `longString` argument may have (a display item's JSON: the run's own
 * limits.maxDisplayItemBytes is checked by the host after reading it, within this).
 */
export const MAX_LONG_TEXT = 256 * 1024 * 1024;
const MAX_OPTIONS = 4096;
const MAX_FORMATTERS = 64;

const HASHES = { "SHA-1": sha1, "SHA-256": sha256, "SHA-384": sha384, "SHA-512": sha512 } as const;
export type HashName = keyof typeof HASHES;

/** An error the guest side turns into its own exception (name and message only). */
class PlatformError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

const URL_PARTS = [
  "href",
  "origin",
  "protocol",
  "username",
  "password",
  "host",
  "hostname",
  "port",
  "pathname",
  "search",
  "hash",
] as const;
const URL_SETTERS = new Set(URL_PARTS.filter((p) => p !== "origin"));

/** Intl constructors the guest may use, and the methods of each it may call. */
const INTL: Record<string, ReadonlySet<string>> = {
  NumberFormat: new Set(["format", "formatToParts", "formatRange", "resolvedOptions"]),
  DateTimeFormat: new Set(["format", "formatToParts", "formatRange", "resolvedOptions"]),
  Collator: new Set(["compare", "resolvedOptions"]),
  PluralRules: new Set(["select", "selectRange", "resolvedOptions"]),
  RelativeTimeFormat: new Set(["format", "formatToParts", "resolvedOptions"]),
  ListFormat: new Set(["format", "formatToParts", "resolvedOptions"]),
  DisplayNames: new Set(["of", "resolvedOptions"]),
};

type Formatter = Record<string, (...args: unknown[]) => unknown>;

export class Platform {
  calls = 0;
  readonly #formatters = new Map<string, Formatter>();
  /** Lets a timer id end the run without firing (AbortSignal.timeout); set by the installer. */
  unrefTimer: (id: number) => undefined = () => undefined;
  /** Sets console.group's indentation (spaces) for the lines printed after it; set by the installer. */
  setIndent: (spaces: number) => undefined = () => undefined;
  /** Hands one display item's JSON to the run (display.ts); set by the installer. */
  display: (json: string) => undefined = () => undefined;

  count(): void {
    if (++this.calls > MAX_PLATFORM_CALLS)
      throw new PlatformError(
        "RangeError",
        `too many calls into the host's URL/Intl/crypto: ${MAX_PLATFORM_CALLS} per run or session`,
      );
  }

  randomBytes(n: number): Uint8Array {
    if (!Number.isInteger(n) || n < 0 || n > MAX_RANDOM_BYTES)
      throw new PlatformError(
        "QuotaExceededError",
        `The ArrayBufferView's byte length (${n}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES})`,
      );
    return globalThis.crypto.getRandomValues(new Uint8Array(n));
  }

  digest(name: string, data: Uint8Array): Uint8Array {
    return hashOf(name)(data);
  }

  hmac(name: string, key: Uint8Array, data: Uint8Array): Uint8Array {
    return hmac(hashOf(name), key, data);
  }

  /** The parts of a parsed URL as JSON (an array in URL_PARTS order), or "" when it does not parse. */
  url(input: string, base: string | undefined): string {
    let u: URL;
    try {
      u = base === undefined ? new URL(input) : new URL(input, base);
    } catch {
      return "";
    }
    return JSON.stringify(URL_PARTS.map((p) => u[p]));
  }

  /** Sets one part of a URL (the setter's own rules apply) and returns the new parts. */
  urlSet(href: string, part: string, value: string): string {
    if (!URL_SETTERS.has(part as never)) throw new PlatformError("TypeError", `URL has no settable part ${part}`);
    let u: URL;
    try {
      u = new URL(href);
    } catch {
      throw new PlatformError("TypeError", "Invalid URL");
    }
    (u as unknown as Record<string, string>)[part] = value;
    return JSON.stringify(URL_PARTS.map((p) => u[p]));
  }

  /** application/x-www-form-urlencoded: text -> JSON [[name, value], ...]. */
  formParse(text: string): string {
    // Node's URLSearchParams strips a leading "?" the guest has already stripped: "??a" must keep "?a".
    return JSON.stringify([...new URLSearchParams(text.startsWith("?") ? `&${text}` : text)]);
  }

  /** JSON [[name, value], ...] -> application/x-www-form-urlencoded text. */
  formSerialize(pairsJson: string): string {
    const pairs = parseJson(pairsJson, MAX_TEXT);
    if (!Array.isArray(pairs)) throw new PlatformError("TypeError", "form pairs must be an array");
    const params = new URLSearchParams();
    for (const p of pairs) {
      if (!Array.isArray(p) || typeof p[0] !== "string" || typeof p[1] !== "string")
        throw new PlatformError("TypeError", "each form pair must be two strings");
      params.append(p[0], p[1]);
    }
    return params.toString();
  }

  /**
   * One Intl call: `new Intl[kind](locales, options)[method](...args)`, with every input copied from
   * JSON (primitives only) and the answer returned as JSON. Dates cross as epoch milliseconds.
   */
  intl(kind: string, localesJson: string, optionsJson: string, method: string, argsJson: string): string {
    const methods = INTL[kind];
    if (!methods || !methods.has(method))
      throw new PlatformError("TypeError", `Intl.${kind}.${method} is not available`);
    const formatter = this.#formatter(kind, localesJson, optionsJson);
    const args = parseJson(argsJson, MAX_TEXT);
    if (!Array.isArray(args) || args.length > 2) throw new PlatformError("TypeError", "bad Intl arguments");
    const values = args.map((a) => dataArg(a, kind));
    try {
      return JSON.stringify(formatter[method]!(...values));
    } catch (error) {
      throw asPlatformError(error);
    }
  }

  /** Intl.getCanonicalLocales: JSON locales in, JSON list out (RangeError for a malformed tag). */
  canonicalLocales(localesJson: string): string {
    try {
      return JSON.stringify(Intl.getCanonicalLocales(localesOf(localesJson)));
    } catch (error) {
      throw asPlatformError(error);
    }
  }

  /** Number/BigInt/Date `toLocale…String` through the host's ICU. */
  toLocale(type: string, value: string, localesJson: string, optionsJson: string): string {
    try {
      return this.#toLocale(type, value, boxLocales(localesJson), optionsOf(optionsJson, type.startsWith("date")));
    } catch (error) {
      throw asPlatformError(error);
    }
  }

  #toLocale(type: string, value: string, locales: string | string[] | undefined, options: object): string {
    switch (type) {
      case "number":
        return Number(value).toLocaleString(locales, options);
      case "bigint":
        if (!/^-?\d{1,4096}$/.test(value)) throw new PlatformError("TypeError", "bad bigint");
        return BigInt(value).toLocaleString(locales, options);
      case "date":
        return new Date(Number(value)).toLocaleString(locales, options);
      case "dateDate":
        return new Date(Number(value)).toLocaleDateString(locales, options);
      case "dateTime":
        return new Date(Number(value)).toLocaleTimeString(locales, options);
    }
    throw new PlatformError("TypeError", `toLocaleString of ${type} is not available`);
  }

  #formatter(kind: string, localesJson: string, optionsJson: string): Formatter {
    const key = `${kind}\u0000${localesJson}\u0000${optionsJson}`;
    let f = this.#formatters.get(key);
    if (f) return f;
    const locales = boxLocales(localesJson);
    const options = optionsOf(optionsJson, kind === "DateTimeFormat");
    const Ctor = (Intl as unknown as Record<string, new (l: unknown, o: unknown) => Formatter>)[kind]!;
    try {
      f = new Ctor(locales, options);
    } catch (error) {
      throw asPlatformError(error);
    }
    if (this.#formatters.size >= MAX_FORMATTERS) this.#formatters.delete(this.#formatters.keys().next().value!);
    this.#formatters.set(key, f);
    return f;
  }
}

function hashOf(name: string) {
  const h = HASHES[name as HashName];
  if (!h) throw new PlatformError("NotSupportedError", `Unrecognized algorithm name: ${name}`);
  return h;
}

function parseJson(text: string, max: number): unknown {
  if (text.length > max) throw new PlatformError("RangeError", `argument longer than ${max} characters`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PlatformError("TypeError", "argument is not valid data");
  }
}

/** undefined, a locale tag, or a short list of them. */
function localesOf(json: string): string | string[] | undefined {
  if (json === "") return "en-US";
  const v = parseJson(json, MAX_OPTIONS);
  if (typeof v === "string" && v.length <= 128) return v;
  if (Array.isArray(v) && v.length <= 16 && v.every((x) => typeof x === "string" && x.length <= 128))
    return v.length ? (v as string[]) : "en-US";
  throw new PlatformError("TypeError", "locales must be a string or an array of strings");
}

/**
 * The locales a formatter is built with: the guest's, then en-US. ICU falls back to the process's
 * default locale (the host's LANG / LC_ALL) when none of the requested ones is available; with
 * en-US last in the list the fallback is the box's instead, and it says nothing about the host.
 */
function boxLocales(json: string): string[] {
  const locales = localesOf(json);
  return [...(Array.isArray(locales) ? locales : [locales ?? "en-US"]), "en-US"];
}

/** A flat object of primitive options; time zone defaults to UTC (the box's), not the host's. */
function optionsOf(json: string, dated: boolean): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = Object.create(null) as Record<string, never>;
  if (json !== "") {
    const v = parseJson(json, MAX_OPTIONS);
    if (v === null || typeof v !== "object" || Array.isArray(v))
      throw new PlatformError("TypeError", "options must be an object");
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" || typeof x === "number" || typeof x === "boolean") out[k] = x;
      else if (x !== null) throw new PlatformError("TypeError", `option ${k} must be a string, number or boolean`);
    }
  }
  if (dated && out.timeZone === undefined) out.timeZone = "UTC";
  return { ...out };
}

/** An Intl argument: a number, a string, or a tagged bigint/date. */
function dataArg(a: unknown, kind: string): unknown {
  if (typeof a === "number" || typeof a === "string") {
    if (typeof a === "string" && a.length > MAX_TEXT) throw new PlatformError("RangeError", "argument too long");
    return a;
  }
  if (Array.isArray(a) && a[0] === "b" && typeof a[1] === "string" && /^-?\d{1,4096}$/.test(a[1])) return BigInt(a[1]);
  if (Array.isArray(a) && kind === "ListFormat" && a.length <= 10_000 && a.every((x) => typeof x === "string"))
    return a;
  if (a === null) return undefined;
  throw new PlatformError("TypeError", "bad Intl argument");
}

/** A host exception as name + message only (RangeError for a bad locale or time zone, mostly). */
export function asPlatformError(error: unknown): PlatformError {
  if (error instanceof PlatformError) return error;
  if (error instanceof Error) return new PlatformError(error.name, error.message);
  return new PlatformError("Error", String(error));
}
