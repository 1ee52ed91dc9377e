// One run (or one session turn) as a child of a warm parent: the request, the deadline, the abort, the
// network, and the RunResult from what came back. The child's result line is untrusted exactly as a
// cold jail's is (result-line.ts); how the child ended is the host's own observation (its cgroup pair,
// the parent's report of its status).

import { Deadline, GRACE } from "../../kit/deadline.ts";
import { aborted as abortedError, outputLimit } from "../../kit/failures.ts";
import type { OutputFile, RunResult } from "../../core/types.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import { openRunNetwork } from "../../network/open.ts";
import { exitError, type Observed } from "../lib/python/result.ts";
import { CappedOutput } from "./capped-output.ts";
import { PROXY_SOCKET } from "./jail.ts";
import { finish, parseResult } from "./result-line.ts";
import { ResultPipe } from "./result-pipe.ts";
import type { ChildEnd, WarmParent } from "./warm.ts";

export interface ParentRun {
  parent: WarmParent;
  request: ResolvedRequest;
  /** When the engine took the run (queueing counts in wallMs). */
  started: number;
  /** A session's turn: the first starts the session's child, the rest go to it. */
  session?: "first" | "next";
}

/** Runs `request` in a child of `parent` and builds its result. */
export async function runInParent(run: ParentRun): Promise<RunResult> {
  const { parent, request, started } = run;
  const { limits } = request;
  const output = new CappedOutput(limits.maxOutputBytes, request.onOutput);
  // Envelope + base64 files; anything longer is a guest writing junk to fd 4. Display items come
  // before it on lines of their own, each parsed and counted as it arrives (result-pipe.ts).
  const resultCap =
    limits.maxResultBytes + Math.ceil((limits.maxFileBytes * 4) / 3) + limits.maxFiles * 1024 + 64 * 1024;
  const pipe = new ResultPipe(limits, request.onResult, resultCap);
  const base = (extra: { peakMemoryBytes?: number } = {}) => {
    const text = output.finish();
    return {
      language: request.language,
      stdout: text.stdout,
      stderr: text.stderr,
      outputTruncated: text.outputTruncated,
      files: [] as OutputFile[],
      results: [...pipe.display.items],
      stats: { engine: "native" as const, wallMs: performance.now() - started, outputBytes: output.total, ...extra },
    };
  };
  if (request.signal?.aborted) return { ...base(), ok: false, error: abortedError() };
  if (run.session === "next" && !parent.capTurn(limits.memoryMb))
    return {
      ...base(),
      ok: false,
      error: {
        kind: "memory",
        name: "MemoryError",
        message: `this session's process already holds more than this run's ${limits.memoryMb} MB (limits.memoryMb); the run did not start and the session is as it was`,
        limit: "memoryMb",
      },
    };

  const deadline = new Deadline(limits.timeoutMs);
  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    parent.killChild();
  }, deadline.left());
  const onAbort = () => {
    aborted = true;
    parent.killChild();
  };
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const network = parent.proxy ? openRunNetwork(request, "native", { deadline }) : undefined;
  parent.proxy?.attach({ network, engine: "native", emit: request.emit });

  const files: Record<string, string> = {};
  for (const [path, bytes] of request.files) files[path] = Buffer.from(bytes).toString("base64");
  const earlyMs = Math.min(GRACE.nativeSoftEarlyMs, limits.timeoutMs * GRACE.nativeSoftEarlyShare);
  const observed = (): Observed => ({ interrupted: deadline.passed(-earlyMs), memoryCapHit: false });
  const childRun = {
    request: {
      code: request.code,
      maxResultBytes: limits.maxResultBytes,
      files,
      maxFiles: limits.maxFiles,
      maxFileBytes: limits.maxFileBytes,
      // The run's limits whole (the display module reads its caps from them).
      limits,
      softDeadline: deadline.wallClockAt(earlyMs) / 1000,
      ...(parent.proxy && network ? { proxySocket: PROXY_SOCKET } : {}),
    },
    limits,
    onResult: (c: Buffer) => pipe.push(c),
    onStdout: (c: Buffer) => output.push("stdout", c),
    onStderr: (c: Buffer) => output.push("stderr", c),
    ...(run.session === "first" ? { session: true } : {}),
  };
  let end: ChildEnd;
  try {
    end = run.session === "next" ? await parent.turn(childRun) : await parent.run(childRun);
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    network?.close();
    parent.proxy?.detach();
  }

  const line = aborted || pipe.overflow ? undefined : parseResult(pipe.resultText(), limits, observed());
  const peak = end.exit.peakMemoryBytes ?? line?.maxrss;
  const result = base(peak !== undefined ? { peakMemoryBytes: peak } : {});
  if (line) return finish(result, line.result, pipe);
  if (aborted) return { ...result, ok: false, error: abortedError() };
  if (timedOut)
    return {
      ...result,
      ok: false,
      error: exitError(end.exit, {
        who: "the Python process",
        deadlineKilled: true,
        aborted: false,
        timeoutMs: limits.timeoutMs,
        memoryCap: "",
      }),
    };
  if (pipe.overflow) return { ...result, ok: false, error: outputLimit("maxResultBytes", limits.maxResultBytes) };
  const tail = result.stderr.trim().split("\n").slice(-3).join("\n");
  return {
    ...result,
    ok: false,
    error: exitError(end.exit, {
      who: "the Python process",
      deadlineKilled: false,
      aborted: false,
      timeoutMs: limits.timeoutMs,
      memoryCap: `its ${limits.memoryMb} MB cap (limits.memoryMb, ${parent.jail.memoryMechanism})`,
      ...(tail ? { detail: tail } : {}),
    }),
  };
}
