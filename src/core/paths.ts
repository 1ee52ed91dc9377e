// A path the guest names (a file handed in, a file the guest wrote): checked and normalised in one
// place, for every engine and the CLI.

/**
 * A file path the guest sees: relative, inside the working directory, no `..`, no NUL, sane length.
 * Returns what is wrong, or undefined when the path is fine.
 */
export function checkRelativePath(path: string): string | undefined {
  if (path.length === 0) return "the path is empty";
  if (path.length > 1024) return "the path is longer than 1024 characters";
  if (path.includes("\0")) return "the path contains a NUL byte";
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path))
    return "the path must be relative to the working directory";
  const parts = path.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.length === 0) return "the path names the working directory itself";
  if (parts.some((p) => p === "..")) return "the path must not contain '..'";
  if (parts.some((p) => p.length > 255)) return "a path component is longer than 255 characters";
  return undefined;
}

export function normalizePath(path: string): string {
  return path
    .split(/[\\/]+/)
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}
