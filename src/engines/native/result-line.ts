// The driver's result line, as the host's verdict (both the cold jail and a warm parent's child send one).

import type { GuestError, Limits, OutputFile, RunResult } from "../../core/types.ts";
import { parseEnvelope, parseFiles, type Observed } from "../lib/python/result.ts";
import type { ResultPipe } from "./result-pipe.ts";

/**
 * The run's result from its parsed line (the files only on success). A display item the host refused
 * or counted past a cap fails the run whatever the driver says: the host's count is the one believed.
 */
export function finish(base: Omit<RunResult, "ok" | "value" | "error">, line: Envelope, pipe: ResultPipe): RunResult {
  const refused = pipe.display.failure;
  if (refused) return { ...base, ok: false, error: refused };
  return line.ok
    ? { ...base, ok: true, value: line.value, files: line.files }
    : { ...base, ok: false, error: line.error };
}

/** A parsed result line: the value and the files, or the error the run ends with. */
export type Envelope = { ok: true; value: unknown; files: OutputFile[] } | { ok: false; error: GuestError };

/**
 * The driver's line, as the host's verdict. It comes from the guest's own process, so it is untrusted
 * (src/engines/lib/python/result.ts parses it): plain JSON, checked field by field, files re-checked
 * against the caps and their paths validated. Undefined: no line at all, or not a result line.
 */
export function parseResult(
  text: string | undefined,
  limits: Limits,
  observed: Observed,
): { result: Envelope; maxrss?: number } | undefined {
  const line = text?.trim().split("\n").pop();
  if (!line) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const envelope = parseEnvelope(r.envelope, observed, limits);
  if (!envelope) return undefined;
  const maxrss =
    typeof r.maxrss === "number" && Number.isSafeInteger(r.maxrss) && r.maxrss > 0 ? { maxrss: r.maxrss } : {};
  if (!envelope.ok) return { result: envelope, ...maxrss };
  const files = parseFiles(r.files, limits);
  return files.ok
    ? { result: { ok: true, value: envelope.value, files: files.files }, ...maxrss }
    : { result: { ok: false, error: files.error }, ...maxrss };
}
