// What the side-by-side benches (bench-compare.ts, bench-compare-queue.ts) share: REV resolved to a
// commit (a clear message and exit 2 when it is not one), checked out detached into a temporary
// worktree that borrows this tree's node_modules, and removed again when the bench is done.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";

export interface Checkout {
  /** This working tree's root. */
  here: string;
  commit: string;
  /** The temporary worktree holding `commit`. */
  base: string;
  remove: () => void;
}

export function checkout(rev: string, tool: string): Checkout {
  const here = resolve(import.meta.dirname, "..");
  let commit: string;
  try {
    commit = execFileSync("git", ["-C", here, "rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    console.error(`${tool}: REV "${rev}" is not a commit of this repository`);
    process.exit(2);
  }
  const base = mkdtempSync(join(os.tmpdir(), "wasmcell-compare-"));
  execFileSync("git", ["-C", here, "worktree", "add", "--detach", "--quiet", base, commit]);
  symlinkSync(join(here, "node_modules"), join(base, "node_modules"));
  return {
    here,
    commit,
    base,
    remove: () => {
      execFileSync("git", ["-C", here, "worktree", "remove", "--force", base]);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
