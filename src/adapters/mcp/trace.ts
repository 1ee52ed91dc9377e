// MCP `_meta.traceparent` into the run: the W3C trace context a client sends with a request becomes
// the run's parent span (RunRequest.traceparent; the spans are the tracing layer's). The value comes
// from the client, so only a well-formed `traceparent` passes (version 00, non-zero ids), bounded; any
// other value is dropped, never an error (a trace is an observation, not part of the call).

import type { RunRequest } from "../../core/types.ts";

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The request's `traceparent` if it is a well-formed W3C value, else undefined. */
export function traceparentOf(meta: Record<string, unknown> | undefined): string | undefined {
  const value = meta?.traceparent;
  return typeof value === "string" && TRACEPARENT.test(value) ? value : undefined;
}

/** Puts `traceparent` on the run request (`RunRequest.traceparent`, the library's trace option). */
export function withTraceparent(request: RunRequest, traceparent: string | undefined): void {
  if (traceparent !== undefined) request.traceparent = traceparent;
}
