// The package lock: which Python packages the library holds, pinned to one Debian package version
// each, with the sha256 of the .deb (as the archive's Packages index states it) and of the files
// installed from it (a tree hash, see tree.ts). Nothing rides "latest": what the lock names is what
// `wasmcell setup` installs, and any byte that differs is an error naming the package.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { SetupError } from "../core/errors.ts";

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a lowercase hex sha256");
// Debian package names and versions as Debian policy allows them, so they are safe to hand to apt.
const debName = z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/);
const debVersion = z.string().regex(/^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/);

const lockedPackage = z
  .object({
    /** The distribution name (PyPI spelling), as `importlib.metadata` reports it. */
    name: z.string().min(1).max(100),
    /** The upstream version. */
    version: z.string().min(1).max(50),
    /** What `import` says to reach it (the first is the smoke-tested one). */
    imports: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/))
      .min(1)
      .max(10),
    /** Imported before the Pyodide memory snapshot is taken, so runs that use it skip the import. */
    preload: z.boolean(),
    source: z
      .object({
        debian: debName,
        version: debVersion,
        architecture: z.enum(["all", "amd64"]),
        /** The path in the Debian archive (from the Packages index). */
        filename: z.string().regex(/^pool\/[A-Za-z0-9+._/~-]+\.deb$/),
        /** sha256 of the .deb file. */
        sha256,
      })
      .strict(),
    /** Tree hash of the files this package installs into the library (see tree.ts). */
    installedSha256: sha256,
  })
  .strict();

const lockSchema = z
  .object({
    lockVersion: z.literal(1),
    /** The archive the packages come from (informational: the checksums are what is checked). */
    distribution: z.string(),
    /** The subtree of each .deb that goes into the library. */
    root: z.literal("usr/lib/python3/dist-packages"),
    packages: z.array(lockedPackage).min(1).max(500),
  })
  .strict();

export type Lock = z.infer<typeof lockSchema>;
export type LockedPackage = z.infer<typeof lockedPackage>;

/** The lock shipped with wasmcell (packages.lock.json at the package root). */
export const DEFAULT_LOCK_PATH = fileURLToPath(new URL("../../packages.lock.json", import.meta.url));

export interface LoadedLock {
  lock: Lock;
  path: string;
  /** sha256 of the lock file's bytes: names the library built from it. */
  digest: string;
}

export function loadLock(path = DEFAULT_LOCK_PATH): LoadedLock {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new SetupError(`cannot read the package lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  return { ...parseLock(bytes, path), path };
}

export function parseLock(bytes: Uint8Array, path: string): Omit<LoadedLock, "path"> {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch (error) {
    throw new SetupError(`the package lock ${path} is not JSON: ${(error as Error).message}`);
  }
  const parsed = lockSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SetupError(`the package lock ${path} is invalid at ${issue?.path.join(".") ?? "?"}: ${issue?.message}`);
  }
  const seen = new Set<string>();
  for (const p of parsed.data.packages) {
    if (seen.has(p.source.debian)) throw new SetupError(`the package lock ${path} names ${p.source.debian} twice`);
    seen.add(p.source.debian);
  }
  return { lock: parsed.data, digest: createHash("sha256").update(bytes).digest("hex") };
}

/** The .deb file name apt-get download gives this package. */
export function debFileName(p: LockedPackage): string {
  // apt writes an epoch's ':' as '%3a' in file names.
  return `${p.source.debian}_${p.source.version.replace(":", "%3a")}_${p.source.architecture}.deb`;
}
