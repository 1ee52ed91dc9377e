// File helpers shared by every engine that hands back the files a run wrote.

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

/** The MIME type of an output file, from its extension (case-insensitive); unknown: octet-stream. */
export function mimeTypeOf(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && MIME[ext]) || "application/octet-stream";
}
