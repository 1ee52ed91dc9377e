// A guest's call of a host function, answered on the host: the worker proxies `await name(...args)` by
// name, the real function runs here with the run's abort signal, and its value goes back as JSON (a
// throw as a name and a message). The call is counted and bounded by the worker's engine, and aborted
// when the run settles (the job's scope).

import type { WorkerHandle } from "./handle.ts";
import type { Job } from "./job.ts";
import type { HostMessage, WorkerMessage } from "./protocol.ts";

export function answerHostCall(handle: WorkerHandle<Job>, job: Job, m: Extract<WorkerMessage, { t: "call" }>): void {
  const fn = Object.hasOwn(job.req.hostFunctions, m.name) ? job.req.hostFunctions[m.name] : undefined;
  const send = (r: Extract<HostMessage, { t: "reply" }>) => {
    job.calls.delete(m.call);
    if (!handle.dead && handle.jobs.has(job.id)) handle.post(r);
  };
  const fail = (error: unknown, unserialisable: boolean) => {
    const e = error instanceof Error ? error : new Error(String(error));
    send({
      t: "reply",
      id: job.id,
      call: m.call,
      ok: false,
      name: String(e.name),
      message: String(e.message),
      unserialisable,
    });
  };
  if (!fn) {
    fail(new Error(`${m.name} is not available in this run`), false);
    return;
  }
  const controller = new AbortController();
  job.calls.set(m.call, controller);
  let settled: Promise<unknown>;
  try {
    settled = Promise.resolve(fn(m.args, { signal: controller.signal }));
  } catch (error) {
    settled = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  settled.then(
    (value) => {
      let json: string | undefined;
      try {
        json = value === undefined ? undefined : JSON.stringify(value);
      } catch (error) {
        fail(error, true);
        return;
      }
      send({ t: "reply", id: job.id, call: m.call, ok: true, json });
    },
    (error: unknown) => fail(error, false),
  );
}
