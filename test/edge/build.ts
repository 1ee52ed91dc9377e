// The runtime tests that install wasmcell as a package use its built files (dist/): build once when
// dist/ is missing or older than the newest source file (npm test has just built it).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function newestSource(): number {
  let newest = statSync(join(root, "package.json")).mtimeMs;
  for (const entry of readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

export function ensureBuilt(): void {
  const built = join(root, "dist", "edge.js");
  const assets = ["quickjs.wasm", "engines/lib/quickjs/stripper.js"].every((file) =>
    existsSync(join(root, "dist", file)),
  );
  if (existsSync(built) && assets && statSync(built).mtimeMs >= newestSource()) return;
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
}
