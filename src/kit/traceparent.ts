// The W3C `traceparent` header value (Trace Context, level 1), parsed and bounded in one place: it
// arrives from whoever sent the run (the application, a queue job's author, an MCP client), so it is
// untrusted text. What a valid one gives is a remote span context (ids and flags, nothing else);
// `tracestate` is not carried. Nothing here imports OpenTelemetry: the ids are plain data.

/** The longest `traceparent` a request may carry; the front door and the queue's wire refuse longer. */
export const TRACEPARENT_MAX_CHARS = 512;

/** A caller's span, as its `traceparent` names it. */
export interface RemoteParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  readonly traceFlags: number;
}

// version-traceid-parentid-flags; a later version may append fields after a dash.
const SHAPE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The caller's span a `traceparent` names, or undefined when the value is not a valid one. Follows the
 * specification's parsing rules: lowercase hex only; version `ff` is invalid; version `00` is exactly
 * 55 characters; a later version is read by its first four fields (anything after must follow a dash);
 * all-zero trace or span ids are invalid. Longer than TRACEPARENT_MAX_CHARS: invalid, unread.
 */
export function parseTraceparent(value: unknown): RemoteParent | undefined {
  if (typeof value !== "string" || value.length > TRACEPARENT_MAX_CHARS) return undefined;
  const m = SHAPE.exec(value);
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string?];
  if (version === "ff") return undefined;
  if (version === "00" && rest !== undefined) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}

/** The `traceparent` (version 00) naming a span, for a job that carries it on to a worker. */
export function formatTraceparent(parent: RemoteParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}
