// What a span may say, as one allowlist: every attribute key wasmcell sets, with the type of its
// value. Spans leave the process (to a collector, a vendor, whoever reads the traces), so they say only
// kinds, sizes, counts, durations, names from closed sets and the application's own host-function
// names; never code, values, output, file contents or names, URLs, hosts, header values or messages.
// Types hold it at compile time (`TraceAttributes`); `allowedAttributes` holds it at run time (a value
// outside its key's set, or a key not listed, is dropped), and the tracing room sets attributes through
// nothing else (test/kit/trace.test.ts checks both).
//
// Not blocked: a hostile guest can still steer the numbers (how many bytes it sends, how long it runs),
// a covert channel of a few bits per span, like the stats a result already carries.

import { type NetworkDenialReason, WASMCELL_ERROR_CODES, type WasmcellErrorCode } from "../core/errors.ts";
import {
  ENGINES,
  ERROR_KINDS,
  LANGUAGES,
  LIMIT_NAMES,
  type EngineName,
  type ErrorKind,
  type Language,
  type Limits,
} from "../core/types.ts";

/** A host function's name as the application registered it (made only from the application's table). */
export type HostFunctionName = string & { readonly __hostFunctionName: unique symbol };

const DENIAL_REASONS = [
  "no-network",
  "scheme",
  "not-allowed",
  "address",
  "dns",
  "method",
  "redirect",
  "limit",
  "timeout",
  "response",
] as const satisfies readonly NetworkDenialReason[];
type UnlistedReason = Exclude<NetworkDenialReason, (typeof DENIAL_REASONS)[number]>;
const _everyReasonListed: [UnlistedReason] extends [never] ? true : UnlistedReason = true;

/** The methods a span names; any other (a guest may send any token) is `_OTHER`, as semantic conventions say. */
export const HTTP_METHODS = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
  "_OTHER",
] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * `error.type`: a run's error kind, a thrown WasmcellError's code, `threw` (a host function threw),
 * `refused` (a session's state could not be stored), `_OTHER` (an error that is none of these).
 */
export const ERROR_TYPES = [...ERROR_KINDS, ...WASMCELL_ERROR_CODES, "threw", "refused", "_OTHER"] as const;
export type ErrorType = ErrorKind | WasmcellErrorCode | "threw" | "refused" | "_OTHER";

/** Every attribute wasmcell sets on a span, and its value's type. */
export interface TraceAttributes {
  /** The run's language. */
  "wasmcell.language": Language;
  /** The engine that ran it. */
  "wasmcell.engine": EngineName;
  /** The run belongs to a session (`session.run`). */
  "wasmcell.session": boolean;
  /** The code's size, UTF-8 bytes. */
  "wasmcell.code.bytes": number;
  /** Input files, and their bytes together. */
  "wasmcell.files.count": number;
  "wasmcell.files.bytes": number;
  /** Host functions the run may call. */
  "wasmcell.host_functions.count": number;
  /** The run has a network. */
  "wasmcell.network": boolean;
  /** The request carried a `traceparent` that was not a valid one (so the caller's context is the parent). */
  "wasmcell.traceparent.ignored": boolean;
  /** The run succeeded (`ok`). */
  "wasmcell.ok": boolean;
  /** What failed, from a closed set (ERROR_TYPES); absent on success, as semantic conventions say. */
  "error.type": ErrorType;
  /** The limit that fired (`error.limit`). */
  "wasmcell.limit": keyof Limits;
  /** Bytes of stdout + stderr the guest tried to write; the output was cut at the cap. */
  "wasmcell.output.bytes": number;
  "wasmcell.output.truncated": boolean;
  /** Files the run gave back, and their bytes together; display items it showed. */
  "wasmcell.result.files.count": number;
  "wasmcell.result.files.bytes": number;
  "wasmcell.result.displays.count": number;
  /** The engine's wall time for the run, and the peak memory it saw. */
  "wasmcell.wall_ms": number;
  "wasmcell.peak_memory.bytes": number;
  /** Runs already waiting for a slot when this one joined the queue. */
  "wasmcell.admission.waiting": number;
  /** The host function called: the application's name for it. */
  "wasmcell.host_call.function": HostFunctionName;
  /** How many arguments the guest passed (their values are never recorded). */
  "wasmcell.host_call.args": number;
  /** The request's method (`_OTHER` for one outside HTTP_METHODS), port and response status. */
  "http.request.method": HttpMethod;
  "server.port": number;
  "http.response.status_code": number;
  /** The host's decision on one request (or redirect hop) and, when refused, why. */
  "wasmcell.egress.allowed": boolean;
  "wasmcell.egress.reason": NetworkDenialReason;
  "wasmcell.egress.bytes_sent": number;
  "wasmcell.egress.bytes_received": number;
  /** A session's sealed state, in bytes (0 for a fork made in place). */
  "wasmcell.snapshot.bytes": number;
}

type Spec =
  | { readonly type: "boolean" }
  | { readonly type: "number" }
  | { readonly type: "enum"; readonly values: readonly string[] }
  | { readonly type: "host-function" };

const BOOL = { type: "boolean" } as const;
const NUM = { type: "number" } as const;
const oneOf = (values: readonly string[]) => ({ type: "enum", values }) as const;

/** The allowlist: every key a span may carry, and what its value may be. */
export const ATTRIBUTES: { readonly [K in keyof TraceAttributes]-?: Spec } = Object.freeze({
  "wasmcell.language": oneOf(LANGUAGES),
  "wasmcell.engine": oneOf(ENGINES),
  "wasmcell.session": BOOL,
  "wasmcell.code.bytes": NUM,
  "wasmcell.files.count": NUM,
  "wasmcell.files.bytes": NUM,
  "wasmcell.host_functions.count": NUM,
  "wasmcell.network": BOOL,
  "wasmcell.traceparent.ignored": BOOL,
  "wasmcell.ok": BOOL,
  "error.type": oneOf(ERROR_TYPES),
  "wasmcell.limit": oneOf(LIMIT_NAMES),
  "wasmcell.output.bytes": NUM,
  "wasmcell.output.truncated": BOOL,
  "wasmcell.result.files.count": NUM,
  "wasmcell.result.files.bytes": NUM,
  "wasmcell.result.displays.count": NUM,
  "wasmcell.wall_ms": NUM,
  "wasmcell.peak_memory.bytes": NUM,
  "wasmcell.admission.waiting": NUM,
  "wasmcell.host_call.function": { type: "host-function" },
  "wasmcell.host_call.args": NUM,
  "http.request.method": oneOf(HTTP_METHODS),
  "server.port": NUM,
  "http.response.status_code": NUM,
  "wasmcell.egress.allowed": BOOL,
  "wasmcell.egress.reason": oneOf(DENIAL_REASONS),
  "wasmcell.egress.bytes_sent": NUM,
  "wasmcell.egress.bytes_received": NUM,
  "wasmcell.snapshot.bytes": NUM,
});

// A JavaScript identifier, as `javascript.hostFunctions` requires of a name (options/javascript.ts).
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]{0,127}$/;

/** True when `value` is one `key` may hold. */
export function allowedAttribute(key: string, value: unknown): boolean {
  if (!Object.hasOwn(ATTRIBUTES, key)) return false;
  const spec = ATTRIBUTES[key as keyof TraceAttributes];
  switch (spec.type) {
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value) && value >= 0;
    case "enum":
      return typeof value === "string" && spec.values.includes(value);
    case "host-function":
      return typeof value === "string" && IDENTIFIER.test(value);
  }
}

/** The attributes that pass the allowlist (the rest dropped): what a span is given, and nothing else. */
export function allowedAttributes(attributes: Partial<TraceAttributes>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (allowedAttribute(key, value)) out[key] = value;
  }
  return out;
}

/** A method as a span names it: one of HTTP_METHODS, else `_OTHER`. */
export function methodName(method: string): HttpMethod {
  return (HTTP_METHODS as readonly string[]).includes(method) && method !== "_OTHER"
    ? (method as HttpMethod)
    : "_OTHER";
}
