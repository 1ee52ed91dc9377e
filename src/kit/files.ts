// File helpers shared by every engine that hands back the files a run wrote: their MIME type, and the
// one check of a returned file set against the run's caps (one wording, kit/failures.ts).

import type { GuestError, Limits } from "../core/types.ts";
import { outputLimit } from "./failures.ts";

const MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  html: "text/html",
  xml: "application/xml",
  js: "text/javascript",
  ts: "text/typescript",
  py: "text/x-python",
  parquet: "application/vnd.apache.parquet",
  npy: "application/octet-stream",
};

/**
 * A file set a run returns (or would, after one more write) against `limits.maxFiles` and
 * `limits.maxFileBytes`: the `output_limit` verdict for the first cap passed, or undefined. Every room
 * that counts returned files calls this: the QuickJS guest's `fs`, the host's re-check of a worker's
 * answer, and the Python tiers' result parser.
 */
export function checkReturnedFiles(
  files: { readonly length: number; bytes: number },
  limits: Pick<Limits, "maxFiles" | "maxFileBytes">,
): GuestError | undefined {
  if (files.length > limits.maxFiles) return outputLimit("maxFiles", limits.maxFiles);
  if (files.bytes > limits.maxFileBytes) return outputLimit("maxFileBytes", limits.maxFileBytes);
  return undefined;
}

/** The MIME type of an output file, from its extension (case-insensitive); unknown: octet-stream. */
export function mimeTypeOf(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && MIME[ext]) || "application/octet-stream";
}
