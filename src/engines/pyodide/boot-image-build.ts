// Building a Pyodide memory snapshot: a sealed sidecar cold-loads Pyodide, imports what every run
// needs, and hands back its memory. Its own room so that snapshot.ts (which caches and verifies
// snapshots) and sidecar-client.ts (which starts sidecars from one) do not import each other.

import { EngineStartError } from "../../core/errors.ts";
import type { ResolvedSeal } from "../../options/index.ts";
import { launchSidecar, START_TIMEOUT_MS, STDERR_KEEP } from "./launch.ts";
import { LineReader } from "./line-reader.ts";
import type { InitMessage } from "./protocol.ts";

/** Builds a Pyodide memory snapshot in a sealed sidecar (cold load + the imports every run needs). */
export async function buildSnapshot(options: {
  seal: ResolvedSeal;
  processMemoryMb: number;
  /** The package library's host directory, mounted read-only while the snapshot is built. */
  library?: string | undefined;
  /** Modules imported before the snapshot is taken. */
  preload: string[];
  /** Aborting kills the build (an engine closed while it built in the background). */
  signal?: AbortSignal | undefined;
}): Promise<Uint8Array> {
  const jail = await launchSidecar({
    seal: options.seal,
    processMemoryMb: options.processMemoryMb,
    ...(options.library ? { library: options.library } : {}),
  });
  let stderrTail = "";
  jail.child.stderr.on("data", (c: Buffer) => (stderrTail = (stderrTail + c.toString("utf8")).slice(-STDERR_KEEP)));
  const lines = new LineReader(jail.child.stdout, 512 << 20);
  const init: InitMessage = {
    t: "init",
    mode: "snapshot",
    snapshotBytes: 0,
    stateful: false,
    preload: options.preload,
  };
  jail.child.stdin.write(JSON.stringify(init) + "\n");
  jail.setDeadline(START_TIMEOUT_MS * 2);
  const onAbort = () => jail.kill();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) jail.kill();
  try {
    const header = await lines.next();
    if (!header || header.t !== "snapshot" || typeof header.bytes !== "number") {
      throw new EngineStartError(
        `building the Pyodide snapshot failed${header?.t === "fatal" ? `: ${String(header.message)}` : ""}${stderrTail ? `: ${stderrTail.trim().slice(-1500)}` : ""}`,
      );
    }
    const bytes = await lines.bytes(header.bytes);
    if (!bytes) throw new EngineStartError("building the Pyodide snapshot failed: the sidecar exited early");
    return bytes;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    jail.kill();
    await jail.exited;
  }
}
