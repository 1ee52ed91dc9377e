// File helpers shared by the engines that hand back the files a run wrote (both Python tiers today).

const MIME: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", svg: "image/svg+xml", pdf: "application/pdf",
  csv: "text/csv", tsv: "text/tab-separated-values", txt: "text/plain", md: "text/markdown", json: "application/json",
  html: "text/html", xml: "application/xml", parquet: "application/vnd.apache.parquet", npy: "application/octet-stream",
};

/** The MIME type of an output file, from its extension (case-insensitive); unknown: octet-stream. */
export function mimeTypeOf(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && MIME[ext]) || "application/octet-stream";
}
