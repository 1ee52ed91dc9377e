// The run's files in Pyodide's in-memory file system: the inputs placed under WORKDIR before a run,
// and what the run wrote (new or changed files) collected after it, within the run's file limits.

import type { Limits } from "../../../core/types.ts";
import { fileBytes, walkFs, type EmscriptenFS, type EmscriptenFSNode } from "./checkpoint.ts";
import { WORKDIR } from "./runtime.ts";

export function placeInputFiles(FS: EmscriptenFS, files: Record<string, string>): void {
  for (const [path, b64] of Object.entries(files)) {
    const full = `${WORKDIR}/${path}`;
    const dir = full.slice(0, full.lastIndexOf("/"));
    FS.mkdirTree(dir);
    FS.writeFile(full, Buffer.from(b64, "base64"));
  }
}

/** Files under WORKDIR that are new or changed compared to the inputs. */
export function collectOutputFiles(
  FS: EmscriptenFS,
  inputs: Record<string, string>,
  limits: Pick<Limits, "maxFiles" | "maxFileBytes">,
): { files: { path: string; data: string }[]; over?: "maxFiles" | "maxFileBytes" } {
  const nodes = new Map<string, EmscriptenFSNode>();
  let root: EmscriptenFSNode;
  try {
    root = FS.lookupPath(WORKDIR).node;
  } catch {
    return { files: [] };
  }
  walkFs(FS, root, WORKDIR, nodes);
  const files: { path: string; data: string }[] = [];
  let total = 0;
  for (const [full, node] of nodes) {
    if (!FS.isFile(node.mode)) continue;
    const bytes = fileBytes(node);
    if (!bytes) continue;
    const rel = full.slice(WORKDIR.length + 1);
    const input = inputs[rel];
    if (input !== undefined && Buffer.compare(Buffer.from(input, "base64"), bytes) === 0) continue;
    total += bytes.length;
    // Which cap was passed, not a sentence: the host words every cap once (src/kit/failures.ts).
    if (files.length + 1 > limits.maxFiles) return { files: [], over: "maxFiles" };
    if (total > limits.maxFileBytes) return { files: [], over: "maxFileBytes" };
    files.push({ path: rel, data: Buffer.from(bytes).toString("base64") });
  }
  return { files };
}
