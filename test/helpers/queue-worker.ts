// `wasmcell worker` as a child process for the queue tests and the scale bench: started with
// --log-jobs so the parent reads each run's start and end from the worker's own counters (the bench
// turns it off: two lines a job through a pipe would wake the measuring process twice a job).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { JobEvent } from "../../src/queue/index.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  events: JobEvent[];
  stderr(): string;
  /** The /metrics URL when started with --metrics-port. */
  metricsUrl?: string;
  exited: Promise<number | null>;
}

/** Starts a worker and resolves once it has said it is consuming (bounded: 60 s). */
export async function startWorker(redisUrl: string, args: string[] = [], logJobs = true): Promise<WorkerProcess> {
  const log = logJobs ? ["--log-jobs"] : [];
  const child = spawn(process.execPath, [MAIN, "worker", "--redis", redisUrl, ...log, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: process.env,
  });
  const events: JobEvent[] = [];
  let err = "";
  let buffered = "";
  child.stdout.on("data", (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as JobEvent);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${err}`)), 60_000);
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /at once(?:, metrics on (\S+))?\n/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] ?? "");
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}) before it started: ${err}`));
    });
  });
  const metricsUrl = await ready;
  return { child, events, stderr: () => err, exited, ...(metricsUrl ? { metricsUrl } : {}) };
}
