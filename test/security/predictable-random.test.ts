// Threat: a guest predicts the "random" numbers of another run or of a branch of its session. QuickJS
// seeds Math.random from a clock with millisecond steps, so stateless runs that start in the same
// millisecond (another tenant's, on the same engine) drew the same sequence — 100 runs at once drew
// 25 distinct first values before the fix — and a snapshot copies the generator's state, so every
// resume and fork of one snapshot drew the same sequence as the others and as the original session.
// Every context now gets its seed from the host's CSPRNG when it is handed out or restored. Python's
// module-level `random` draws a new seed from os.urandom at every stateless run, at a session's first
// run, in a fork and on a resume (a template snapshot resumed for many users gives each its own
// sequence); only a resume that says it is the same session carrying on (`reseed: false`) keeps it.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createSandbox, type Sandbox, type Session } from "../../src/index.ts";
import type { RunResult } from "../../src/core/types.ts";
import { closeNative, runNative } from "../helpers/native.ts";

const value = (r: RunResult): unknown => {
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
};
const distinct = (values: unknown[]) => new Set(values.map((v) => JSON.stringify(v))).size;

/** Two forks and two resumes of one snapshot of `session`, each drawing with `draw`; then all are closed. */
async function assertCopiesDiverge(sandbox: Sandbox, session: Session, draw: string): Promise<void> {
  const snapshot = await session.snapshot();
  const copies = [
    await session.fork(),
    await session.fork(),
    await sandbox.resume(snapshot),
    await sandbox.resume(snapshot),
  ];
  const seen = [value(await session.run({ code: draw }))];
  for (const copy of copies) seen.push(value(await copy.run({ code: draw })));
  assert.equal(distinct(seen), seen.length, JSON.stringify(seen));
  for (const copy of copies) await copy.close();
  await session.close();
}

describe("Math.random cannot be predicted from another run or another branch", () => {
  const sandboxes: Sandbox[] = [];
  after(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
    await closeNative();
  });

  for (const isolation of ["thread", "in-process"] as const) {
    it(`JavaScript (${isolation}): 100 stateless runs at once draw 100 different sequences`, async () => {
      const sandbox = await createSandbox({ javascript: { isolation } });
      sandboxes.push(sandbox);
      const runs = await Promise.all(
        Array.from({ length: 100 }, () =>
          sandbox.run({ language: "javascript", code: "[Math.random(), Math.random()]" }),
        ),
      );
      assert.equal(distinct(runs.map(value)), 100);
    });

    it(`JavaScript (${isolation}): forks and resumes of one session diverge from each other and from it`, async () => {
      const sandbox = await createSandbox({ javascript: { isolation } });
      sandboxes.push(sandbox);
      const session = await sandbox.session({ language: "javascript" });
      value(await session.run({ code: "globalThis.draws = () => [Math.random(), Math.random()]; 1" }));
      await assertCopiesDiverge(sandbox, session, "draws()");
    });
  }

  it("Python (Pyodide): stateless runs draw different sequences; forks and resumes of one session diverge", async () => {
    const sandbox = await createSandbox({ python: { pool: 1 } });
    sandboxes.push(sandbox);
    const code = "import random\n[random.random(), random.random()]";
    const runs: unknown[] = [];
    for (let i = 0; i < 5; i++) runs.push(value(await sandbox.run({ language: "python", code })));
    assert.equal(distinct(runs), runs.length);
    const session = await sandbox.session({ language: "python" });
    value(await session.run({ code: "import random" }));
    // The guest seeds its session: a copy that kept that state would draw exactly what the others do.
    value(await session.run({ code: "random.seed(7)" }));
    await assertCopiesDiverge(sandbox, session, "[random.random(), random.random()]");
  });

  it("Python (native): stateless runs draw different sequences", async () => {
    const runs: unknown[] = [];
    for (let i = 0; i < 5; i++) runs.push(value(await runNative("import random\n[random.random(), random.random()]")));
    assert.equal(distinct(runs), runs.length);
  });
});
