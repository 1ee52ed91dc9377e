// What crosses Redis, in one room: a run request going to a worker and its result coming back. Both
// directions are untrusted input (anyone who can write to the Redis can write a job or a result), so
// each is parsed with zod here, with every string, list and byte count bounded, before anything else
// reads it. The request's shape is the front door's own (src/options/request.ts) minus what cannot
// cross a process (host functions, output callbacks, abort signals); file bytes travel as base64 and a
// result's value as the tagged JSON of encodeValue (src/core/values.ts).

import { z } from "zod";
import { decodeValue, encodeValue, ValueShapeError } from "../core/values.ts";
import { InvalidOptionError, WASMCELL_ERROR_CODES, WasmcellError } from "../core/errors.ts";
import { requestSchema } from "../options/request.ts";
import { fail } from "../options/zod.ts";
import {
  ENGINES,
  enginesFor,
  ERROR_KINDS,
  LANGUAGES,
  LIMIT_NAMES,
  limitOf,
  type RunFailure,
  type RunRequest,
  type RunResult,
} from "../core/types.ts";
import { failedRun, lostInQueue } from "../kit/failures.ts";
import { parseDisplayItems } from "../kit/display.ts";

/** Bounds on what one job or one result may carry across Redis (the engines' own limits apply after). */
export const WIRE = Object.freeze({
  /** Characters in one string field (code, stdout, stderr, a file's base64). */
  maxChars: 64 << 20,
  /** Files in one request or result. */
  maxFiles: 10_000,
  /** Characters in a tenant name or an idempotency key. */
  maxIdChars: 128,
  /** Display items in one result (the schema's most for limits.maxResults). */
  maxResults: 10_000,
});

/** A request the queue carries: `sandbox.run`'s, without the fields that are functions or signals. */
export type QueueRequest = Omit<RunRequest, "hostFunctions" | "onOutput" | "onResult" | "signal">;

const text = z.string().max(WIRE.maxChars);
const base64 = z
  .string()
  .max(WIRE.maxChars)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64");
export const tenantSchema = z
  .string()
  .min(1)
  .max(WIRE.maxIdChars)
  .regex(/^[A-Za-z0-9_.-]+$/, "may hold only letters, digits, _ . -");

const wireRequestSchema = requestSchema
  .omit({ hostFunctions: true, onOutput: true, onResult: true, signal: true })
  .extend({
    code: text,
    files: z
      .record(z.string().max(4096), z.union([text, z.object({ base64 }).strict()]))
      .refine((f) => Object.keys(f).length <= WIRE.maxFiles, `at most ${WIRE.maxFiles} files`)
      .optional(),
  });

const jobSchema = z.object({ v: z.literal(1), tenant: tenantSchema, request: wireRequestSchema }).strict();
export type JobData = z.infer<typeof jobSchema>;

const guestErrorSchema = z
  .object({
    kind: z.enum(ERROR_KINDS),
    name: z.string().max(1024),
    message: text,
    stack: text.optional(),
    line: z.number().int().optional(),
    column: z.number().int().optional(),
    limit: z.enum(LIMIT_NAMES).optional(),
  })
  .strict();

const resultSchema = z
  .object({
    ok: z.boolean(),
    language: z.enum(LANGUAGES),
    stdout: text,
    stderr: text,
    outputTruncated: z.boolean(),
    files: z
      .array(z.object({ path: z.string().max(4096), base64, mimeType: z.string().max(256) }).strict())
      .max(WIRE.maxFiles),
    // Shape and count here; each bundle is then parsed by the one display parser (decodeReply).
    results: z
      .array(z.object({ data: z.record(z.string().max(256), z.unknown()), main: z.boolean() }).strict())
      .max(WIRE.maxResults),
    stats: z
      .object({
        engine: z.enum(ENGINES),
        wallMs: z.number().nonnegative(),
        outputBytes: z.number().int().nonnegative(),
        peakMemoryBytes: z.number().nonnegative().optional(),
      })
      .strict(),
    value: z.unknown().optional(),
    error: guestErrorSchema.optional(),
  })
  .strict()
  .refine((r) => (r.ok ? r.error === undefined : r.error !== undefined), "ok and error disagree");

const replySchema = z.discriminatedUnion("kind", [
  z.object({ v: z.literal(1), kind: z.literal("result"), worker: z.string().max(256), result: resultSchema }).strict(),
  z
    .object({
      v: z.literal(1),
      kind: z.literal("host"),
      worker: z.string().max(256),
      error: z
        .object({ code: z.enum(WASMCELL_ERROR_CODES), message: text, field: z.string().max(1024).optional() })
        .strict(),
    })
    .strict(),
]);
export type Reply = z.infer<typeof replySchema>;

// ---- the client's side: a request out, a reply in -------------------------------------------------

/** The job a client adds; bad input throws InvalidOptionError naming the field, before anything is sent. */
export function encodeJob(tenant: string, request: QueueRequest): JobData {
  if (typeof request !== "object" || request === null) throw new InvalidOptionError("request", "must be an object");
  for (const key of ["hostFunctions", "onOutput", "signal"] as const) {
    if (key in request)
      throw new InvalidOptionError(
        `request.${key}`,
        "cannot cross the queue (a function or a signal); give host functions to the worker (createWorker({ hostFunctions }))",
      );
  }
  const files = request.files
    ? Object.fromEntries(
        Object.entries(request.files).map(([p, c]) => [
          p,
          typeof c === "string" ? c : { base64: Buffer.from(c.buffer, c.byteOffset, c.byteLength).toString("base64") },
        ]),
      )
    : undefined;
  const job = { v: 1 as const, tenant, request: { ...request, ...(files ? { files } : {}) } };
  const parsed = jobSchema.safeParse(job);
  if (!parsed.success) fail("", parsed.error);
  return parsed.data;
}

/**
 * A worker's reply, checked: the same RunResult sandbox.run gives, or the same typed error it throws.
 * A reply that fails validation came from something that is not a well-behaved worker: like an engine
 * that answers garbage, it becomes a `crashed` result, never a value the caller trusts.
 */
export function decodeReply(data: unknown, language: RunRequest["language"]): RunResult {
  const parsed = replySchema.safeParse(data);
  if (!parsed.success) return crashed(language, `the worker's reply is malformed: ${parsed.error.issues[0]?.message}`);
  const reply = parsed.data;
  if (reply.kind === "host") {
    const { code, message, field } = reply.error;
    if (code === "INVALID_OPTION" && field !== undefined) {
      const e = new InvalidOptionError(field, "");
      e.message = message;
      throw e;
    }
    throw new WasmcellError(code, message);
  }
  const r = reply.result;
  const shown = parseDisplayItems(r.results, {
    maxResults: WIRE.maxResults,
    maxDisplayItemBytes: WIRE.maxChars,
    maxDisplayBytes: 4 * WIRE.maxChars,
  });
  if (!shown.ok) return crashed(language, `the worker's display items are malformed: ${shown.error.message}`);
  const base = {
    language: r.language,
    stdout: r.stdout,
    stderr: r.stderr,
    outputTruncated: r.outputTruncated,
    files: r.files.map((f) => ({
      path: f.path,
      mimeType: f.mimeType,
      bytes: new Uint8Array(Buffer.from(f.base64, "base64")),
    })),
    results: shown.items,
    stats: {
      engine: r.stats.engine,
      wallMs: r.stats.wallMs,
      outputBytes: r.stats.outputBytes,
      ...(r.stats.peakMemoryBytes !== undefined ? { peakMemoryBytes: r.stats.peakMemoryBytes } : {}),
    },
  };
  if (!r.ok) {
    // The limit named is what the kind means (limitOf), as the worker's front door stamped it: a reply
    // naming another one came from something that is not a well-behaved worker, and is not believed.
    const error = stripUndefinedError(r.error!);
    const limit = limitOf(error, base.stats.engine);
    if (limit === undefined) delete error.limit;
    else error.limit = limit;
    return { ...base, ok: false, error };
  }
  try {
    return { ...base, ok: true, value: decodeValue(r.value) };
  } catch (error) {
    if (error instanceof ValueShapeError)
      return crashed(language, `the worker's result value is malformed: ${error.message}`);
    throw error;
  }
}

/**
 * A run that never produced a trustworthy result (a malformed reply, a job whose workers kept dying).
 * Its engine is the language's first (ENGINE_INFO order): the client cannot know which one a worker
 * would have used, and no engine ran anything it reports.
 */
export function crashed(language: RunRequest["language"], message: string): RunFailure {
  return failedRun(enginesFor(language)[0]!, { language }, lostInQueue(message), performance.now());
}

function stripUndefinedError(e: z.infer<typeof guestErrorSchema>): RunFailure["error"] {
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as unknown as RunFailure["error"];
}

// ---- the worker's side: a job in, a reply out -------------------------------------------------------

/** A job's data, checked and turned back into a RunRequest (bytes decoded); throws InvalidOptionError. */
export function decodeJob(data: unknown): { tenant: string; request: RunRequest } {
  const parsed = jobSchema.safeParse(data);
  if (!parsed.success) fail("job", parsed.error);
  const { tenant, request } = parsed.data;
  const files = request.files
    ? Object.fromEntries(
        Object.entries(request.files).map(([p, c]) => [
          p,
          typeof c === "string" ? c : new Uint8Array(Buffer.from(c.base64, "base64")),
        ]),
      )
    : undefined;
  return { tenant, request: { ...(request as RunRequest), ...(files ? { files } : {}) } };
}

export function resultReply(worker: string, result: RunResult): Reply {
  const { value, error, files, ...rest } = result as RunResult & { value?: unknown; error?: RunFailure["error"] };
  return {
    v: 1,
    kind: "result",
    worker,
    result: {
      ...rest,
      files: files.map((f) => ({
        path: f.path,
        mimeType: f.mimeType,
        base64: Buffer.from(f.bytes).toString("base64"),
      })),
      ...(result.ok ? { value: encodeValue(value) } : { error: error! }),
    },
  };
}

export function hostReply(worker: string, error: WasmcellError): Reply {
  const field = error instanceof InvalidOptionError ? { field: error.field } : {};
  return { v: 1, kind: "host", worker, error: { code: error.code, message: error.message, ...field } };
}
