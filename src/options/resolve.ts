// The options object `createSandbox` takes, and what it resolves to: each concern's defaults and
// schema live in its own room beside this one (limits, javascript, python, seal, network).

import { z } from "zod";
import { InvalidOptionError } from "../core/errors.ts";
import { eventSink, type EventInput, type SandboxEventListener } from "../core/events.ts";
import type { NetworkPolicy } from "../network/policy.ts";
import type { HostFunction, Limits, WasmModuleSource } from "../core/types.ts";
import {
  DEFAULT_JAVASCRIPT,
  defaultMaxParked,
  defaultWorkers,
  javascriptSchema,
  MAX_WORKERS_PER_CORE,
  threadsAvailable,
  type JavaScriptOptions,
} from "./javascript.ts";
import { DEFAULT_LIMITS, limitsSchema } from "./limits.ts";
import { networkSchema, resolveNetwork, type NetworkOptions } from "./network.ts";
import { DEFAULT_PYTHON, pythonSchema, type PythonOptions } from "./python.ts";
import { resolveSeal, sealSchema, type ResolvedSeal, type SealOptions } from "./seal.ts";
import { resolveSessions, sessionsSchema, type ResolvedSessions, type SessionsOptions } from "./sessions.ts";
import { fail, stripUndefined } from "./zod.ts";

export interface SandboxOptions {
  /**
   * Default limits for every run; a request's `limits` override them field by field. For requests from
   * someone else (queue jobs, tool calls) they are also ceilings: see options/ceilings.ts.
   * @defaultValue {@link DEFAULT_LIMITS}
   */
  limits?: Partial<Limits>;
  /** @defaultValue no host functions; {@link DEFAULT_JAVASCRIPT}; the thread pool sized to the machine */
  javascript?: JavaScriptOptions;
  /** @defaultValue {@link DEFAULT_PYTHON}; the pool starts on the first Python run */
  python?: PythonOptions;
  /** @defaultValue {@link DEFAULT_SEAL}: every layer on */
  seal?: SealOptions;
  /**
   * Network access for guest code. See NetworkOptions.
   * @defaultValue false (no network)
   */
  network?: NetworkOptions | false;
  /** @defaultValue {@link DEFAULT_SESSIONS}; a random per-process key; a MemorySessionStore */
  sessions?: SessionsOptions;
  /**
   * Receives what the sandbox did that a caller or a security reviewer needs to see, as plain data
   * (src/core/events.ts): egress decisions, limits that fired, denials, engine restarts, an engine being built
   * on first use and how long that takes, the package library missing. Called synchronously; a
   * listener that throws is ignored.
   * @defaultValue none
   */
  onEvent?: SandboxEventListener;
}

export interface ResolvedOptions {
  limits: Limits;
  hostFunctions: Record<string, HostFunction>;
  /** `javascript.wasmModule`, as given. */
  wasmModule: WasmModuleSource | undefined;
  /**
   * Where JavaScript runs; `isolationGiven` says whether the caller chose it (an edge build honours the
   * default and refuses an explicit "thread").
   */
  javascript: {
    isolation: "thread" | "in-process";
    isolationGiven: boolean;
    workers: number;
    maxWorkers: number;
    runsPerWorker: number;
    maxParked: number;
    maxQueue: number;
    demoteCpuBound: "auto" | boolean;
  };
  /** `prewarm` is true only when the caller gave a `python` object (or set it explicitly). */
  python: Required<PythonOptions>;
  seal: ResolvedSeal;
  /** Undefined: no network. */
  network: NetworkPolicy | undefined;
  sessions: ResolvedSessions;
  /** The caller's onEvent, wrapped (time stamped, throws swallowed). */
  emit: ((event: EventInput) => void) | undefined;
}

const optionsSchema = z
  .object({
    limits: limitsSchema,
    javascript: javascriptSchema,
    python: pythonSchema,
    seal: sealSchema,
    network: networkSchema,
    sessions: sessionsSchema,
    onEvent: z.custom<SandboxEventListener>((v) => typeof v === "function", "must be a function"),
  })
  .partial()
  .strict();

export function resolveOptions(input: SandboxOptions | undefined): ResolvedOptions {
  if (input !== undefined && (typeof input !== "object" || input === null)) {
    throw new InvalidOptionError("options", "must be an object");
  }
  const parsed = optionsSchema.safeParse(input ?? {});
  if (!parsed.success) fail("", parsed.error);
  const o = input ?? {};
  const workers = o.javascript?.workers ?? defaultWorkers();
  const maxWorkers = o.javascript?.maxWorkers ?? Math.max(workers, MAX_WORKERS_PER_CORE * defaultWorkers());
  if (maxWorkers < workers)
    throw new InvalidOptionError("javascript.maxWorkers", `must be at least javascript.workers (${workers})`);
  return {
    limits: { ...DEFAULT_LIMITS, ...stripUndefined(o.limits ?? {}) },
    hostFunctions: { ...(o.javascript?.hostFunctions ?? {}) },
    wasmModule: o.javascript?.wasmModule,
    javascript: {
      isolation: o.javascript?.isolation ?? (threadsAvailable() ? "thread" : "in-process"),
      isolationGiven: o.javascript?.isolation !== undefined,
      workers,
      maxWorkers,
      runsPerWorker: o.javascript?.runsPerWorker ?? DEFAULT_JAVASCRIPT.runsPerWorker,
      maxParked: o.javascript?.maxParked ?? defaultMaxParked(),
      maxQueue: o.javascript?.maxQueue ?? DEFAULT_JAVASCRIPT.maxQueue,
      demoteCpuBound: o.javascript?.demoteCpuBound ?? DEFAULT_JAVASCRIPT.demoteCpuBound,
    },
    python: { ...DEFAULT_PYTHON, prewarm: o.python !== undefined, ...stripUndefined(o.python ?? {}) },
    seal: resolveSeal(o.seal ?? {}),
    network: o.network ? resolveNetwork(o.network) : undefined,
    sessions: resolveSessions(o.sessions),
    emit: eventSink(o.onEvent),
  };
}
