// A run's request: validated, defaults merged, files turned into bytes, the engine chosen.

import { z } from "zod";
import { InvalidOptionError } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { NetworkPolicy } from "../network/policy.ts";
import { checkRelativePath, normalizePath } from "../core/paths.ts";
import { TRACEPARENT_MAX_CHARS } from "../kit/traceparent.ts";
import {
  ENGINES,
  enginesFor,
  LANGUAGES,
  type EngineName,
  type HostFunction,
  type Language,
  type Limits,
  type RunRequest,
} from "../core/types.ts";
import { hostFunctionsSchema } from "./javascript.ts";
import { limitsSchema, QUICKJS_MAX_MEMORY_MB } from "./limits.ts";
import { requestNetworkSchema, resolveRequestNetwork } from "./network.ts";
import type { ResolvedOptions } from "./resolve.ts";
import { fail, stripUndefined } from "./zod.ts";

/** A request after validation: defaults merged, files as bytes, the engine chosen. */
export interface ResolvedRequest {
  language: Language;
  code: string;
  engine: EngineName;
  files: Map<string, Uint8Array>;
  limits: Limits;
  hostFunctions: Record<string, HostFunction>;
  onOutput?: NonNullable<RunRequest["onOutput"]>;
  onResult?: NonNullable<RunRequest["onResult"]>;
  signal?: AbortSignal;
  /** The run's network policy; undefined means no network. */
  network?: NetworkPolicy;
  /** Where the engine reports security events (undefined when nobody listens). */
  emit?: (event: EventInput) => void;
}

/** The request's shape (the queue reuses it, without the fields that cannot cross a process: functions, signals). */
export const requestSchema = z
  .object({
    language: z.enum(LANGUAGES),
    code: z.string(),
    engine: z.enum(ENGINES).optional(),
    files: z.record(z.string(), z.union([z.string(), z.instanceof(Uint8Array)])).optional(),
    limits: limitsSchema.optional(),
    hostFunctions: hostFunctionsSchema.optional(),
    onOutput: z
      .custom<NonNullable<RunRequest["onOutput"]>>((v) => typeof v === "function", "must be a function")
      .optional(),
    onResult: z
      .custom<NonNullable<RunRequest["onResult"]>>((v) => typeof v === "function", "must be a function")
      .optional(),
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, "must be an AbortSignal").optional(),
    network: requestNetworkSchema.optional(),
    traceparent: z.string().max(TRACEPARENT_MAX_CHARS).optional(),
  })
  .strict();

const encoder = new TextEncoder();

export function resolveRequest(request: RunRequest, options: ResolvedOptions): ResolvedRequest {
  if (typeof request !== "object" || request === null) throw new InvalidOptionError("request", "must be an object");
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) fail("request", parsed.error);
  const limits: Limits = { ...options.limits, ...stripUndefined(request.limits ?? {}) };
  const codeBytes = encoder.encode(request.code).byteLength;
  if (codeBytes > limits.maxCodeBytes) {
    throw new InvalidOptionError(
      "request.code",
      `is ${codeBytes} bytes, over the ${limits.maxCodeBytes}-byte limit (limits.maxCodeBytes)`,
    );
  }
  const engine = request.engine ?? defaultEngine(request.language, options);
  const allowed: readonly EngineName[] = enginesFor(request.language);
  if (!allowed.includes(engine)) {
    throw new InvalidOptionError(
      "request.engine",
      `"${engine}" does not run ${request.language}; use ${allowed.map((e) => `"${e}"`).join(" or ")}`,
    );
  }
  // QuickJS's memory cannot hold more (options/limits.ts); the cap, its messages and its grace
  // arithmetic all use what the run can really have.
  if (engine === "quickjs" && limits.memoryMb > QUICKJS_MAX_MEMORY_MB) limits.memoryMb = QUICKJS_MAX_MEMORY_MB;
  const files = new Map<string, Uint8Array>();
  let total = 0;
  for (const [path, content] of Object.entries(request.files ?? {})) {
    const problem = checkRelativePath(path);
    if (problem) throw new InvalidOptionError(`request.files[${JSON.stringify(path)}]`, problem);
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    total += bytes.byteLength;
    files.set(normalizePath(path), bytes);
  }
  if (total > limits.maxFileBytes) {
    throw new InvalidOptionError(
      "request.files",
      `hold ${total} bytes, over the ${limits.maxFileBytes}-byte limit (limits.maxFileBytes)`,
    );
  }
  const resolved: ResolvedRequest = {
    language: request.language,
    code: request.code,
    engine,
    files,
    limits,
    hostFunctions: { ...options.hostFunctions, ...(request.hostFunctions ?? {}) },
  };
  if (request.onOutput) resolved.onOutput = request.onOutput;
  if (request.onResult) resolved.onResult = request.onResult;
  if (request.signal) resolved.signal = request.signal;
  const network = resolveRequestNetwork(request, options.network);
  if (network) resolved.network = network;
  if (options.emit) resolved.emit = options.emit;
  return resolved;
}

function defaultEngine(language: Language, options: ResolvedOptions): EngineName {
  return language === "python" ? options.python.engine : enginesFor(language)[0]!;
}
