// The result of a run that failed before (or without) running guest code: no output, no files. Its own
// file so the host side of the thread pool can build one without loading the QuickJS engine.

import type { ResolvedRequest } from "../../options.ts";
import type { GuestError, RunFailure } from "../../types.ts";

/** A result for a run that failed before (or without) guest code: no output, no files. */
export function failure(req: Pick<ResolvedRequest, "language">, error: GuestError, startedAt: number): RunFailure {
  return {
    ok: false,
    error,
    language: req.language,
    stdout: "",
    stderr: "",
    outputTruncated: false,
    files: [],
    stats: { engine: "quickjs", wallMs: performance.now() - startedAt, outputBytes: 0 },
  };
}
