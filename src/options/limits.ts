// `limits`: what one run may use. The defaults and the schema side by side.

import { z } from "zod";
import type { AsParsed, Same } from "./zod.ts";
import type { Limits } from "../core/types.ts";

/** The defaults, in one place. docs/options.md lists the same values (test/options/options.test.ts checks it). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: 5_000,
  memoryMb: 128,
  maxOutputBytes: 64 * 1024,
  maxResultBytes: 1024 * 1024,
  maxStackKb: 256,
  maxTimers: 1_000,
  maxHostCalls: 256,
  maxFiles: 32,
  maxFileBytes: 16 * 1024 * 1024,
  maxCodeBytes: 1024 * 1024,
  maxResults: 64,
  maxDisplayItemBytes: 4 * 1024 * 1024,
  maxDisplayBytes: 16 * 1024 * 1024,
});

/**
 * The most memory a JavaScript run can have, in MB. QuickJS's WebAssembly memory is created with a
 * maximum of 2 GiB (test/engines/memory-maximum.test.ts grows the module's memory to find it), so a
 * larger `memoryMb` gives a JavaScript run this much: the cap can be no higher than what the module
 * can hold. Python's engines take the schema's whole range.
 */
export const QUICKJS_MAX_MEMORY_MB = 2048;

export const positiveInt = (max: number) => z.number().int().positive().max(max);

export const limitsSchema = z
  .object({
    timeoutMs: positiveInt(24 * 3600 * 1000),
    memoryMb: positiveInt(4096),
    maxOutputBytes: z
      .number()
      .int()
      .nonnegative()
      .max(1 << 30),
    maxResultBytes: positiveInt(1 << 30),
    maxStackKb: z
      .number()
      .int()
      .min(16)
      .max(64 * 1024),
    maxTimers: z.number().int().nonnegative().max(1_000_000),
    maxHostCalls: z.number().int().nonnegative().max(1_000_000),
    maxFiles: z.number().int().nonnegative().max(10_000),
    maxFileBytes: z
      .number()
      .int()
      .nonnegative()
      .max(1 << 30),
    maxCodeBytes: positiveInt(64 << 20),
    maxResults: z.number().int().nonnegative().max(10_000),
    maxDisplayItemBytes: positiveInt(1 << 30),
    maxDisplayBytes: positiveInt(1 << 30),
  })
  .partial()
  .strict();

/** The schema and `Limits` name the same fields with the same types (checked when compiling). */
export const limitsTied: Same<z.infer<typeof limitsSchema>, AsParsed<Limits>> = true;
