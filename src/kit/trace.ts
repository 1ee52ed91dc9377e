// OpenTelemetry spans, in one room: the tracer, the span names, and the one place attributes are set
// (through the allowlist of trace-attributes.ts). Everything goes through `@opentelemetry/api`, which is
// a no-op until the application registers a provider: then a run costs one non-recording span and a
// check, nothing else is wrapped.
//
// The spans: `wasmcell.run` (a run, from the front door), under it `wasmcell.admission` (a wait for a
// slot, only when the run had to wait), `wasmcell.host_call` (an application's host function),
// `wasmcell.egress` (the network gate's decision on one request or redirect hop), and the session
// spans `wasmcell.session.snapshot`, `.resume`, `.evict` and `.fork`.
//
// The parent: a request's `traceparent` when it is a valid one (kit/traceparent.ts), else the caller's
// active context (the application's own span, when it registered a context manager). Children whose
// work is started by something other than the run's own promise chain (host calls answered for a worker
// thread, the network proxy's requests) get the run's span explicitly; admission and session spans,
// which happen inside the run's (or the session call's) own chain, take the active context.
//
// What is never done: no exception is recorded (`recordException` would copy a message and a stack the
// guest wrote), no status message but an error type from a closed set, no span event.

import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { EventInput } from "../core/events.ts";
import { WasmcellError } from "../core/errors.ts";
import type { EngineName, HostFunction, Language, RunResult } from "../core/types.ts";
import {
  allowedAttributes,
  ERROR_TYPES,
  methodName,
  type ErrorType,
  type HostFunctionName,
  type TraceAttributes,
} from "./trace-attributes.ts";
import { formatTraceparent, parseTraceparent } from "./traceparent.ts";

/** The instrumentation scope's name: `trace.getTracer("wasmcell")`. */
export const TRACER_NAME = "wasmcell";

/** Every span name wasmcell uses. */
export const SPANS = Object.freeze({
  run: "wasmcell.run",
  admission: "wasmcell.admission",
  hostCall: "wasmcell.host_call",
  egress: "wasmcell.egress",
  snapshot: "wasmcell.session.snapshot",
  resume: "wasmcell.session.resume",
  evict: "wasmcell.session.evict",
  fork: "wasmcell.session.fork",
} as const);
export type SpanName = (typeof SPANS)[keyof typeof SPANS];

// Asked for at each use, not kept: the global provider may be registered (or replaced) at any time.
function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** The one way a span is made: a name from SPANS, attributes through the allowlist. */
function start(name: SpanName, parent: Context, attributes: Partial<TraceAttributes> = {}, startTime?: number): Span {
  return tracer().startSpan(
    name,
    { kind: SpanKind.INTERNAL, attributes: allowedAttributes(attributes), ...(startTime ? { startTime } : {}) },
    parent,
  );
}

/** The one way attributes are added to a span. */
function set(span: Span, attributes: Partial<TraceAttributes>): void {
  span.setAttributes(allowedAttributes(attributes));
}

/** Marks a span failed: `error.type` and the status, both from the closed set; never a message. */
function failed(span: Span, type: ErrorType): void {
  const safe: ErrorType = (ERROR_TYPES as readonly string[]).includes(type) ? type : "_OTHER";
  set(span, { "error.type": safe });
  span.setStatus({ code: SpanStatusCode.ERROR, message: safe });
}

/** What a thrown error says about itself on a span: a WasmcellError's code, else `_OTHER`. */
function thrownType(error: unknown): ErrorType {
  return error instanceof WasmcellError ? error.code : "_OTHER";
}

/** What the front door knows of a run when it starts. */
export interface RunShape {
  language: Language;
  engine: EngineName;
  code: string;
  files: ReadonlyMap<string, Uint8Array>;
  hostFunctions: Readonly<Record<string, HostFunction>>;
  network: boolean;
  session: boolean;
}

/** A run's span and what hangs under it. `NOT_TRACED` when nothing records. */
export interface RunTrace {
  readonly recording: boolean;
  /** Runs `work` with the run's span as the active context. */
  within<T>(work: () => T): T;
  /** The request with its host functions and its event sink traced (the same request when not recording). */
  wrap<R extends { hostFunctions: Record<string, HostFunction>; emit?: ((event: EventInput) => void) | undefined }>(
    request: R,
  ): R;
  /** Ends the span when `work` settles (a result, or a throw), and hands `work` back. */
  ended(work: Promise<RunResult>): Promise<RunResult>;
}

const NOT_TRACED: RunTrace = Object.freeze({
  recording: false,
  within: <T>(work: () => T): T => work(),
  wrap: <R>(request: R): R => request,
  ended: (work: Promise<RunResult>) => work,
});

const encoder = new TextEncoder();

/**
 * Starts a run's span under its parent (see the header). `traceparent` is the request's field, already
 * checked to be a string of bounded length by the front door; one that does not parse is ignored (the
 * W3C rule: a receiver that cannot parse `traceparent` starts from its own context) and the span says so.
 */
export function traceRun(shape: RunShape, traceparent: string | undefined): RunTrace {
  const active = context.active();
  const remote = traceparent === undefined ? undefined : parseTraceparent(traceparent);
  const parent = remote ? trace.setSpanContext(active, { ...remote, isRemote: true }) : active;
  const span = start(SPANS.run, parent);
  if (!span.isRecording()) {
    span.end();
    return NOT_TRACED;
  }
  let fileBytes = 0;
  for (const bytes of shape.files.values()) fileBytes += bytes.byteLength;
  set(span, {
    "wasmcell.language": shape.language,
    "wasmcell.engine": shape.engine,
    "wasmcell.session": shape.session,
    "wasmcell.code.bytes": encoder.encode(shape.code).byteLength,
    "wasmcell.files.count": shape.files.size,
    "wasmcell.files.bytes": fileBytes,
    "wasmcell.host_functions.count": Object.keys(shape.hostFunctions).length,
    "wasmcell.network": shape.network,
    ...(traceparent !== undefined && !remote ? { "wasmcell.traceparent.ignored": true } : {}),
  });
  const here = trace.setSpan(parent, span);
  return {
    recording: true,
    within: (work) => context.with(here, work),
    wrap: (request) => ({
      ...request,
      hostFunctions: traceHostFunctions(request.hostFunctions, here),
      emit: traceEgress(request.emit, here),
    }),
    ended: (work) =>
      work.then(
        (result) => {
          endRun(span, result);
          return result;
        },
        (error: unknown) => {
          failed(span, thrownType(error));
          span.end();
          throw error;
        },
      ),
  };
}

function endRun(span: Span, result: RunResult): void {
  let fileBytes = 0;
  for (const f of result.files) fileBytes += f.bytes.byteLength;
  set(span, {
    "wasmcell.ok": result.ok,
    "wasmcell.output.bytes": result.stats.outputBytes,
    "wasmcell.output.truncated": result.outputTruncated,
    "wasmcell.result.files.count": result.files.length,
    "wasmcell.result.files.bytes": fileBytes,
    "wasmcell.result.displays.count": result.results.length,
    "wasmcell.wall_ms": result.stats.wallMs,
    ...(result.stats.peakMemoryBytes !== undefined
      ? { "wasmcell.peak_memory.bytes": result.stats.peakMemoryBytes }
      : {}),
  });
  if (!result.ok) {
    if (result.error.limit !== undefined) set(span, { "wasmcell.limit": result.error.limit });
    failed(span, result.error.kind);
  }
  span.end();
}

/**
 * The application's host functions, each call a `wasmcell.host_call` span under the run (the
 * function runs with that span active, so the application's own spans nest under it). The span names
 * the function by the application's key (the guest can only call names the application registered,
 * and the key comes from the application's table here, never from the guest) and counts the
 * arguments; their values, the return value and a thrown message are never recorded.
 */
function traceHostFunctions(fns: Record<string, HostFunction>, run: Context): Record<string, HostFunction> {
  return Object.fromEntries(
    Object.entries(fns).map(([key, fn]) => {
      const name = key as HostFunctionName;
      const traced: HostFunction = (args, callContext) => {
        const span = start(SPANS.hostCall, run, {
          "wasmcell.host_call.function": name,
          "wasmcell.host_call.args": Array.isArray(args) ? args.length : 0,
        });
        const threw = (error: unknown): never => {
          failed(span, "threw");
          span.end();
          throw error;
        };
        let out: unknown;
        try {
          out = context.with(trace.setSpan(run, span), fn, undefined, args, callContext);
        } catch (error) {
          return threw(error);
        }
        if (isThenable(out))
          return Promise.resolve(out).then((value) => {
            span.end();
            return value;
          }, threw);
        span.end();
        return out;
      };
      return [key, traced];
    }),
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * The run's event sink, with each egress decision also a `wasmcell.egress` span under the run: the
 * method (from a closed set), the port, allowed or the denial's reason, the status and byte counts.
 * Never the host: a guest chooses the host it asks for, so a refused one is guest text
 * (`<secret>.attacker.example`), and under a wildcard entry (`*.example.com`) so is an allowed one; the
 * application's own `onEvent` listener, which stays in its process, gets the host.
 */
function traceEgress(emit: ((event: EventInput) => void) | undefined, run: Context): (event: EventInput) => void {
  return (event) => {
    if (event.type === "egress") {
      const span = start(SPANS.egress, run, {
        "http.request.method": methodName(event.method),
        "server.port": event.port,
        "wasmcell.egress.allowed": event.allowed,
        "wasmcell.egress.bytes_sent": event.bytesSent,
        "wasmcell.egress.bytes_received": event.bytesReceived,
        ...(event.status !== undefined ? { "http.response.status_code": event.status } : {}),
        ...(event.reason !== undefined ? { "wasmcell.egress.reason": event.reason } : {}),
      });
      if (!event.allowed) failed(span, "denied");
      span.end();
    }
    emit?.(event);
  };
}

/**
 * A wait for a slot (a worker thread, a sidecar, a jail), under the active context (the run's): made
 * only on the path that waits, so a run admitted at once has none. `end(error)` with what ended the wait
 * when it was not a slot.
 */
export function traceAdmission(waiting: number): { end(error?: unknown): void } {
  // A wait outside any traced call (an engine warming its own pool) belongs to no one: no span.
  if (!trace.getSpan(context.active())?.isRecording()) return NOT_WAITING;
  const span = start(SPANS.admission, context.active(), { "wasmcell.admission.waiting": waiting });
  if (!span.isRecording()) return NOT_WAITING;
  return {
    end: (error?: unknown) => {
      if (error !== undefined) failed(span, waitEnded(error));
      span.end();
    },
  };
}
const NOT_WAITING = Object.freeze({ end: () => {} });

/** What ended a wait without a slot: a WasmcellError's code (closed, a failed start), an abort, or else `_OTHER`. */
function waitEnded(error: unknown): ErrorType {
  if (error instanceof WasmcellError) return error.code;
  return error instanceof Error && error.name === "AbortError" ? "aborted" : "_OTHER";
}

const SESSION_SPANS = {
  "session.snapshot": SPANS.snapshot,
  "session.resume": SPANS.resume,
  "session.evicted": SPANS.evict,
} as const;

/**
 * A session's state leaving or entering an interpreter (engines/sessions/data-session.ts tells each
 * one once, with its size and how long it took), as a span ending now that began `ms` ago, under the
 * active context (the run, the snapshot call or the fork that caused it). `refused`: the state could not
 * be stored (its reason is a message, so only the fact is recorded).
 */
export function traceSession(
  type: "session.snapshot" | "session.resume" | "session.evicted" | "session.ended",
  engine: EngineName,
  bytes: number,
  ms: number,
  refused: boolean,
): void {
  if (type === "session.ended") return;
  // An eviction comes from the session's idle timer, set during its last run: it belongs to no call.
  const span = start(
    SESSION_SPANS[type],
    type === "session.evicted" ? ROOT_CONTEXT : context.active(),
    { "wasmcell.engine": engine, "wasmcell.snapshot.bytes": bytes },
    Date.now() - Math.max(0, ms),
  );
  if (refused) failed(span, "refused");
  span.end();
}

/** Runs `work` as a span of `name` under the active context (a fork, made at the front door). */
export async function traceCall<T>(
  name: SpanName,
  attributes: Partial<TraceAttributes>,
  work: () => Promise<T>,
): Promise<T> {
  const span = start(name, context.active(), attributes);
  if (!span.isRecording()) {
    span.end();
    return work();
  }
  try {
    return await context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    failed(span, thrownType(error));
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs `work` outside any caller's context: what it starts and keeps (an engine, its pools and their
 * timers) belongs to no request, so later waits and background work are not put under the span that
 * happened to be active when it started.
 */
export function untraced<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

/**
 * The active span as a `traceparent`, for a request that leaves this process (a queue job), or
 * undefined when there is no valid active span.
 */
export function activeTraceparent(): string | undefined {
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const ids = span.spanContext();
  return parseTraceparent(formatTraceparent(ids)) ? formatTraceparent(ids) : undefined;
}
