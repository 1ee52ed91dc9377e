// Threat: a stateless run leaves work behind that runs inside the next run on the same warm runtime.
// Guest code runs while the host reads a run's result or its exception (getters, toJSON, Proxy traps),
// after the run's last drain of the promise job queue; a job queued then would be executed by the next
// run's drain, in the old context. FinalizationRegistry callbacks are queued by garbage collection, which
// any later run's allocations trigger. Each attack runs on one warm cell and asserts the exact outcome of
// the attacking run and of the next run, and that the cell was retired rather than handed on.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { warmCell, type WarmCell } from "../helpers/quickjs.ts";

// Each job would spoil the next run: spin past its deadline, write to its console, flag a global.
const JOB = `Promise.resolve().then(() => { globalThis.leaked = true; console.log("leak"); for (;;) {} })`;

const ATTACKS: { name: string; code: string; ok: boolean; value?: unknown }[] = [
  { name: "a getter on the result", code: `({ get x() { ${JOB}; return 1 } })`, ok: true, value: { x: 1 } },
  { name: "toJSON on the result", code: `({ toJSON() { ${JOB}; return "j" } })`, ok: true, value: "j" },
  {
    name: "a Proxy trap on the result",
    code: `new Proxy({}, { ownKeys() { ${JOB}; return [] } })`,
    ok: true,
    value: {},
  },
  {
    name: "a getter on a thrown error",
    code: `const e = new Error("m"); Object.defineProperty(e, "message", { get() { ${JOB}; return "boom" } }); throw e`,
    ok: false,
  },
  {
    name: "a Proxy trap on a thrown non-error",
    code: `throw new Proxy({}, { getPrototypeOf() { ${JOB}; return null } })`,
    ok: false,
  },
  {
    name: "a job that loops over a slow builtin",
    code: `const big = Array.from({ length: 1e4 }, (_, i) => ({ i })); ({ get x() { Promise.resolve().then(() => { for (;;) JSON.stringify(big) }); return 2 } })`,
    ok: true,
    value: { x: 2 },
  },
];

describe("quickjs: promise jobs never outlive their run", () => {
  let warm: WarmCell;
  const stderr: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  before(async () => {
    warm = await warmCell({ timeoutMs: 1000 });
    process.stderr.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      stderr.push(String(chunk));
      return write(chunk, ...rest);
    };
  });
  after(async () => {
    process.stderr.write = write;
    await warm.close();
  });

  it("consecutive clean runs are served by the same warm cell (reuse is real)", async () => {
    const cell = warm.cell();
    const runs = cell.runs;
    assert.equal((await warm.run("1")).ok, true);
    assert.equal(warm.cell(), cell);
    assert.equal(cell.runs, runs + 1);
  });

  for (const attack of ATTACKS) {
    it(`${attack.name}: the job is dropped with its runtime; the next run is clean`, async () => {
      const used = warm.cell();
      const r = await warm.run(attack.code);
      assert.equal(r.ok, attack.ok, JSON.stringify(r));
      if (attack.ok) assert.deepEqual(r.ok && r.value, attack.value);
      else assert.equal(!r.ok && r.error.kind, "runtime");
      assert.equal(r.stdout, "");
      assert.equal(used.dead, true, "a runtime with a queued job is retired, not reused");
      assert.deepEqual(warm.idle(), []);
      const next = await warm.run(`[typeof leaked, "clean"]`);
      assert.deepEqual(next.ok && next.value, ["undefined", "clean"], JSON.stringify(next));
      assert.equal(next.stdout, "");
    });
  }

  it("a runtime with a pending job is refused when it is taken, even if it was released as clean", async () => {
    const cell = warm.cell();
    // Plant a job directly (as a bug in release bookkeeping would leave one): taking the cell checks again.
    const ctx = cell.rt.newContext();
    const r = ctx.evalCode("Promise.resolve().then(() => { for (;;) {} })", "plant.js", 0);
    (r.error ?? r.value).dispose();
    ctx.dispose();
    assert.equal(cell.rt.hasPendingJob(), true);
    const next = await warm.run(`"clean"`);
    assert.equal(next.ok && next.value, "clean", JSON.stringify(next));
    assert.equal(cell.dead, true);
    assert.notEqual(warm.cell(), cell);
  });

  it("FinalizationRegistry is not available: garbage collection in a later run cannot call back", async () => {
    const r = await warm.run(`typeof FinalizationRegistry`);
    assert.equal(r.ok && r.value, "undefined");
    const plant = await warm.run(`globalThis.FinalizationRegistry ?? "absent"`);
    assert.equal(plant.ok && plant.value, "absent");
    const next = await warm.run(`const a = []; for (let i = 0; i < 2e5; i++) a.push({ i }); a.length`);
    assert.equal(next.ok && next.value, 2e5);
  });

  it("nothing reached the host's stderr", () => {
    assert.deepEqual(
      stderr.filter((s) => !s.startsWith("#") && !/^\s*$/.test(s)),
      [],
    );
  });
});
