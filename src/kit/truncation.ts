// What every engine appends where it cut stdout/stderr at `limits.maxOutputBytes`: one wording, so a
// caller (or a model reading the output) sees the same marker whichever engine ran the code.

/** The marker for output cut at `limit` bytes. The Pyodide sidecar gets it in each run message. */
export function truncationMarker(limit: number): string {
  return `\n[output truncated: over ${limit} bytes (limits.maxOutputBytes)]\n`;
}
