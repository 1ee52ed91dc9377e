// The queue's evidence, bounded: a real redis-server, three `wasmcell worker` processes, 400 jobs from
// four tenants with one capped at 2 runs at once, and one worker SIGKILLed while it holds jobs.
// Every result is correct; the cap is never exceeded, measured twice: from the workers' own start/end
// counters (--log-jobs, each stamped by its own process's clock) and from Redis itself (MONITOR shows
// every admission and release of a slot in the one order Redis ran them, so no two clocks are
// compared); no job holds two slots at once; the killed worker's jobs complete on the others; nothing
// is lost; and only the jobs that were in flight on the killed worker ran twice (at-least-once).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { createQueueClient, type JobEvent, type QueueClient } from "../../src/queue/index.ts";
import { startWorker, type WorkerProcess } from "../helpers/queue-worker.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

const JOBS = 400;
const TENANTS = ["alpha", "beta", "gamma", "capped"] as const;
const CAP = 2;
const ARGS = ["--lock-ms", "5000", "--stalled-ms", "1000", "--timeout-ms", "2000", "--concurrency", "4"];
const WORKER_ARGS = [...ARGS, "--js-workers", "1", "--js-max-workers", "2", "--tenant-cap", `capped=${CAP}`];

let redis: RedisServer;
let client: QueueClient;
let monitorBase: Redis | undefined;
let monitor: Redis | undefined;
/** The capped tenant's slot commands, in the order Redis executed them (MONITOR, scripts included). */
const slotLog: Array<{ op: "add" | "rem" | "mark"; member: string }> = [];
const SLOTS = "wasmcell:wasmcell-runs:tenant:capped:running";
const workers: WorkerProcess[] = [];
before(async () => {
  redis = await startRedis();
  monitorBase = new Redis(redis.url);
  monitor = await monitorBase.monitor(); // a second connection, in MONITOR mode
  monitor.on("monitor", (_time: string, args: string[]) => {
    const [cmd, key, ...rest] = args;
    const op = cmd?.toUpperCase();
    if (op === "ECHO" && key?.startsWith("mark|")) slotLog.push({ op: "mark", member: key.slice(5) });
    if (key !== SLOTS) return;
    if (op === "ZADD") slotLog.push({ op: "add", member: rest[1]! });
    if (op === "ZREM") slotLog.push({ op: "rem", member: rest[0]! });
  });
  client = await createQueueClient({ redis: redis.url, waitMs: 120_000 });
  for (let i = 0; i < 3; i++) workers.push(await startWorker(redis.url, WORKER_ARGS));
});
after(async () => {
  monitor?.disconnect();
  monitorBase?.disconnect();
  await client?.close();
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
  await redis?.stop();
});

/** Guest code whose answer depends on the job: the sum 0..n; the capped tenant's runs last ~25 ms. */
const code = (n: number, slow: boolean) =>
  `${slow ? "const t = Date.now(); while (Date.now() - t < 25) {}\n" : ""}let s = 0; for (let k = 0; k <= ${n}; k++) s += k; s`;

/** Writes a marker into Redis's order of commands and resolves once MONITOR has shown it. */
async function mark(text: string): Promise<void> {
  const conn = new Redis(redis.url);
  await conn.echo(`mark|${text}`);
  conn.disconnect();
  for (let i = 0; !slotLog.some((e) => e.op === "mark" && e.member === text); i++) {
    if (i > 1_000) throw new Error(`MONITOR never showed the marker ${text}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Replays the slot log: an attempt holds its slot from the ZADD that admitted it (a member first seen)
 * to its release (ZREM), or to the marker written once its worker was dead. A slot's lapse (expiry) is
 * not counted as an end, so a run whose slot lapsed under it still counts: this is an upper bound on
 * the runs in flight. Returns the most slots held at once, and the most held at once by one job.
 */
function replaySlots(): { most: number; mostPerJob: number; admitted: number } {
  const open = new Set<string>();
  const perJob = new Map<string, number>();
  let most = 0;
  let mostPerJob = 0;
  let admitted = 0;
  const close = (member: string) => {
    if (!open.delete(member)) return;
    const job = member.split("|")[0]!;
    perJob.set(job, perJob.get(job)! - 1);
  };
  for (const { op, member } of slotLog) {
    if (op === "mark") for (const m of [...open]) if (m.split("|")[1] === member) close(m);
    if (op === "rem") close(member);
    if (op !== "add" || open.has(member)) continue; // a ZADD of a held member is a lease extension
    open.add(member);
    admitted++;
    const job = member.split("|")[0]!;
    perJob.set(job, (perJob.get(job) ?? 0) + 1);
    most = Math.max(most, open.size);
    mostPerJob = Math.max(mostPerJob, perJob.get(job)!);
  }
  return { most, mostPerJob, admitted };
}

/** The most runs of `tenant` in flight at once, from start/end events (an end before a start on a tie). */
function maxOverlap(events: JobEvent[], tenant: string): number {
  const points = events
    .filter((e) => e.tenant === tenant)
    .map((e) => [e.at, e.type === "start" ? 1 : -1] as const)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of points) max = Math.max(max, (now += d));
  return max;
}

describe("queue scale-out: 3 workers, 4 tenants, one capped, one worker killed mid-load", () => {
  it("every result is correct, the cap holds, the killed worker's jobs finish elsewhere", async () => {
    const ids: Array<{ id: string; n: number }> = [];
    for (let i = 0; i < JOBS; i++) {
      const tenant = TENANTS[i % TENANTS.length]!;
      const id = `job-${i}`;
      await client.enqueue({ language: "javascript", code: code(i, tenant === "capped") }, { id, tenant });
      ids.push({ id, n: i });
    }
    // Kill worker 0 once it holds at least one job it has started and not finished.
    const victim = workers[0]!;
    const open = () => {
      const started = new Set(victim.events.filter((e) => e.type === "start").map((e) => e.id));
      for (const e of victim.events) if (e.type === "end") started.delete(e.id);
      return started;
    };
    for (let i = 0; open().size === 0 && i < 2_000; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(open().size > 0, "the victim never held a job");
    victim.child.kill("SIGKILL");
    const killedAt = performance.timeOrigin + performance.now();
    await victim.exited;
    const victimId = victim.events[0]!.worker;
    await mark(victimId); // into Redis's own order: from here on the victim's slots hold no running attempt
    // Read after the exit: every event the victim wrote before it died has been parsed by now.
    const inFlight = open();

    const results = await Promise.all(ids.map(({ id }) => client.result(id)));
    results.forEach((r, i) => {
      assert.equal(r.ok, true, `job-${i}: ${!r.ok ? r.error.message : ""}`);
      assert.equal(r.ok && r.value, (i * (i + 1)) / 2, `job-${i}`);
    });

    // The cap, from the workers' own counters; the killed worker's open runs end when it died.
    const all = workers.flatMap((w) => w.events);
    const closed = [
      ...all,
      ...[...inFlight].map((id) => ({ type: "end" as const, id, tenant: tenantOf(id), worker: "", at: killedAt })),
    ];
    assert.equal(maxOverlap(closed, "capped"), CAP, "the capped tenant reached its cap and never passed it");
    // The cap again, from Redis's one order of admissions and releases.
    await mark("end");
    const slots = replaySlots();
    assert.ok(slots.admitted >= JOBS / TENANTS.length, `every capped job was admitted (${slots.admitted})`);
    assert.equal(slots.most, CAP, "Redis never held more slots of the capped tenant than its cap");
    assert.equal(slots.mostPerJob, 1, "no job was admitted twice at once");

    // Started once each, except jobs the victim had started: those in flight when it died started
    // exactly once more, elsewhere; one it finished but had not yet reported may also have.
    const starts = new Map<string, string[]>();
    for (const e of all) if (e.type === "start") starts.set(e.id, [...(starts.get(e.id) ?? []), e.worker]);
    for (const { id } of ids) {
      const by = starts.get(`r.${id}`) ?? [];
      if (inFlight.has(`r.${id}`))
        assert.deepEqual(by.length, 2, `${id} was in flight on the killed worker: ${by.join(", ")}`);
      else if (by.length !== 1) assert.ok(by.length === 2 && by[0] === victimId, `${id} ran on ${by.join(", ")}`);
      if (by.length === 2) assert.notEqual(by[1], by[0]);
    }
  });
});

function tenantOf(jobId: string): string {
  const i = Number(jobId.replace(/^r\.job-/, ""));
  return TENANTS[i % TENANTS.length]!;
}
