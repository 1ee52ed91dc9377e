// One run (or one session turn) as a child of a warm parent: the request, the deadline, the abort, the
// network, and the RunResult from what came back. The child's result line is untrusted exactly as a
// cold jail's is (result-line.ts); how the child ended is the host's own observation (its cgroup pair,
// the parent's report of its status).

import { Deadline } from "../../kit/deadline.ts";
import { aborted as abortedError, outputLimit } from "../../kit/failures.ts";
import type { RunResult } from "../../core/types.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import { openRunNetwork } from "../../network/open.ts";
import { finish, parseResult } from "./result-line.ts";
import { deadlineError, driverRequest, exitWithoutResult, runFrame } from "./run-frame.ts";
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
  const { output, pipe, base } = runFrame(request, started);
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

  const { body, observed } = driverRequest(request, deadline, parent.proxy !== undefined && network !== undefined);
  const childRun = {
    request: body,
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
  if (timedOut) return { ...result, ok: false, error: deadlineError(end.exit, request) };
  if (pipe.overflow) return { ...result, ok: false, error: outputLimit("maxResultBytes", limits.maxResultBytes) };
  return {
    ...result,
    ok: false,
    error: exitWithoutResult(end.exit, request, result.stderr, parent.jail.memoryMechanism),
  };
}
