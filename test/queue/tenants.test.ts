// The tenant gate's Lua against a real redis-server: two gates stand for two workers. A cap admits
// exactly N across both; two attempts of one job hold two slots; a slot whose worker died lapses after
// the TTL; a rate admits `max` per window and says how long to wait; a refusal by one counter consumes
// neither. Then two real workers and a lapsed lock: the cap holds when a job is handed over mid-run.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { createSandbox } from "../../src/index.ts";
import { createQueueClient, createWorker, type JobEvent } from "../../src/queue/index.ts";
import { TenantGate } from "../../src/queue/tenants.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let server: RedisServer;
let r1: Redis;
let r2: Redis;
before(async () => {
  server = await startRedis();
  r1 = new Redis(server.url);
  r2 = new Redis(server.url);
});
after(async () => {
  r1?.disconnect();
  r2?.disconnect();
  await server?.stop();
});

describe("tenant gate", () => {
  it("a cap admits exactly N across workers, and a released slot is free again", async () => {
    const a = new TenantGate(r1, { t: { concurrency: 2 } }, "test1", 10_000, "a");
    const b = new TenantGate(r2, { t: { concurrency: 2 } }, "test1", 10_000, "b");
    const j1 = await a.admit("t", "j1");
    assert.equal(j1.admitted, true);
    assert.equal((await b.admit("t", "j2")).admitted, true);
    const refused = await b.admit("t", "j3");
    assert.deepEqual(refused.admitted ? undefined : refused.reason, "concurrency");
    await a.release("t", j1.admitted ? j1.slot : "");
    assert.equal((await b.admit("t", "j3")).admitted, true);
    assert.equal((await b.admit("other", "x")).admitted, true, "tenants without a rule are not limited");
  });

  it("a second attempt of a job that holds a slot takes a slot of its own, and the first frees only its own", async () => {
    const first = new TenantGate(r1, { t: { concurrency: 2 } }, "test4", 10_000, "w1");
    const second = new TenantGate(r2, { t: { concurrency: 2 } }, "test4", 10_000, "w2");
    const a1 = await first.admit("t", "a");
    const a2 = await second.admit("t", "a");
    assert.ok(a1.admitted && a2.admitted && a1.slot !== a2.slot, "two attempts, two slots");
    assert.equal((await second.admit("t", "b")).admitted, false, "the two attempts of one job fill a cap of 2");
    await first.release("t", a1.slot); // the first attempt ends late, after the second took the job
    assert.equal(await second.extend("t", a2.slot), true, "the second attempt's slot survives the first's release");
    const b = await second.admit("t", "b");
    assert.equal(b.admitted, true);
    assert.equal((await second.admit("t", "c")).admitted, false, "a and b run: the cap is full");
  });

  it("a dead worker's slot lapses after the TTL", async () => {
    const dead = new TenantGate(r1, { t: { concurrency: 1 } }, "test2", 100);
    const live = new TenantGate(r2, { t: { concurrency: 1 } }, "test2", 100);
    const held = await dead.admit("t", "held");
    assert.equal(held.admitted, true);
    assert.equal((await live.admit("t", "next")).admitted, false);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await live.admit("t", "next")).admitted, true);
    assert.equal(await dead.extend("t", held.admitted ? held.slot : ""), false, "the lapsed slot cannot be extended");
  });

  it("a rate admits max per window, says how long to wait, and a cap refusal spends no rate", async () => {
    const gate = new TenantGate(r1, { t: { concurrency: 1, rate: { max: 2, durationMs: 5_000 } } }, "test3", 10_000);
    const a = await gate.admit("t", "a");
    assert.equal(a.admitted, true);
    assert.equal((await gate.admit("t", "b")).admitted, false, "capped");
    await gate.release("t", a.admitted ? a.slot : "");
    const b = await gate.admit("t", "b");
    assert.equal(b.admitted, true, "the capped refusal did not spend the rate");
    await gate.release("t", b.admitted ? b.slot : "");
    const refused = await gate.admit("t", "c");
    assert.equal(refused.admitted, false);
    assert.ok(!refused.admitted && refused.reason === "rate" && refused.retryMs > 0 && refused.retryMs <= 5_000);
  });

  it("refuses bad limits by name", () => {
    assert.throws(() => new TenantGate(r1, { t: { concurrency: 0 } }, "p", 1), /tenants\.t\.concurrency/);
    assert.throws(() => new TenantGate(r1, { t: { rate: { max: 1, durationMs: 0 } } }, "p", 1), /rate\.durationMs/);
  });
});

// The threat: a job's lock lapses while its first run is still going (a renewal that came late under
// load, a worker paused past its lock), BullMQ's stall check hands the job to a second worker, and
// both runs count as one slot of a capped tenant. Here the lapse is forced (the lock key is deleted
// from inside the first run, which then waits until another worker has taken the job), both workers
// are in this process, so their start/end stamps share one clock.
describe("tenant cap: a job handed to a second worker while its first run goes on (a lapsed lock)", () => {
  it("the second attempt does not share the first one's slot: the cap of 1 holds", async () => {
    const queue = "stall";
    const jobKey = `wasmcell:${queue}:r.a`;
    const sandbox = await createSandbox({ limits: { timeoutMs: 5_000 }, javascript: { workers: 1, maxWorkers: 2 } });
    const events: JobEvent[] = [];
    let handedOff = false;
    const handoff = async () => {
      if (Number(await r1.hget(jobKey, "ats")) >= 2) return; // a later attempt: nothing to force
      await r1.del(`${jobKey}:lock`);
      for (let i = 0; i < 400 && Number(await r1.hget(jobKey, "ats")) < 2; i++)
        await new Promise((r) => setTimeout(r, 10));
      handedOff = Number(await r1.hget(jobKey, "ats")) >= 2;
    };
    const common = {
      redis: server.url,
      queue,
      sandbox,
      concurrency: 1,
      lockDurationMs: 8_000,
      stalledIntervalMs: 50,
      tenants: { capped: { concurrency: 1 } },
      hostFunctions: () => ({ handoff }),
      onJob: (e: JobEvent) => events.push(e),
    };
    const w1 = await createWorker({ ...common, id: "w1" });
    const w2 = await createWorker({ ...common, id: "w2" });
    const client = await createQueueClient({ redis: server.url, queue, waitMs: 30_000 });
    try {
      const r = await client.run(
        { language: "javascript", code: "await handoff(); 6 * 7" },
        { id: "a", tenant: "capped" },
      );
      assert.equal(r.ok && r.value, 42, !r.ok ? r.error.message : "");
      assert.ok(handedOff, "the stall check handed the job to the other worker while the first run went on");
      let running = 0;
      let most = 0;
      for (const e of events.sort((x, y) => x.at - y.at))
        most = Math.max(most, (running += e.type === "start" ? 1 : -1));
      assert.equal(most, 1, `runs of the capped tenant at once: ${JSON.stringify(events)}`);
    } finally {
      await client.close();
      await Promise.all([w1.close(), w2.close()]);
      await sandbox.close();
    }
  });
});
