// Test files that a jail must read (bound in, or read by the dropped uid) need a parent directory that
// uid can search. TMPDIR may be a private 0700 directory (the suite must pass with any TMPDIR), so
// such files go under /var/tmp (world-searchable, sticky) when TMPDIR is not reachable.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readableBy } from "../../src/jail/host.ts";

/** A fresh directory (0700, owned by us) inside a parent the jail's uid 65534 can search. */
export function jailReachableTempDir(prefix: string): string {
  const base = readableBy(tmpdir(), 65534, 65534).ok ? tmpdir() : "/var/tmp";
  return mkdtempSync(join(base, prefix));
}
