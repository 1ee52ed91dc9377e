// Threat: anything a guest does denies another tenant's run (session-pins-every-sidecar.test.ts has the
// three ways a session's state cannot move, one by one). Here the property, over the hostile corpus:
// in a sandbox of one pool sidecar where other sessions hold open files (pinned beside the pool, or
// ended past python.maxPinned), hold states over sessions.maxSnapshotBytes, or are evicted by time and
// by need, `run()` and `session.run()` never reject or hang — every call gets a result — and every stateless
// run of the corpus ends exactly as it ends on a sandbox of its own. A seeded random schedule of
// concurrent calls: a failure names the seed and the step that reproduce it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSandbox, ERROR_KINDS, type Session } from "../../src/index.ts";
import type { Limits, RunResult } from "../../src/core/types.ts";
import { rng } from "../helpers/fuzz-answers.ts";
import { PY_HOSTILE } from "../helpers/pyodide-state.ts";
import { FULL } from "../helpers/pyodide.ts";

/** Another schedule: WASMCELL_TEST_SEED=n. */
const SEED = Number(process.env.WASMCELL_TEST_SEED ?? 34);
const GROUPS = 40;
const AT_ONCE = 3;
const SESSIONS = 4;

// What a session's own run may do to its state besides the corpus: pin it, make it oversize, make it
// movable again.
const SESSION_CODE: [string, Partial<Limits>][] = [
  ["f = open('held.txt', 'w')", {}],
  ["import os\nbig = os.urandom(1_500_000)", {}],
  ["x = 1", {}],
  ["globals().get('f') and f.close()\nbig = None", {}],
  ...PY_HOSTILE.map(([code, limits]): [string, Partial<Limits>] => [code, limits]),
];

/** Each call is answered within this (a deadline, a sidecar start or two on a loaded machine). */
const SERVED_WITHIN_MS = 120_000;

/** `work`, or a rejection saying it was not served within SERVED_WITHIN_MS. */
function bounded(work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not served within ${SERVED_WITHIN_MS} ms`)), SERVED_WITHIN_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function outcome(r: RunResult): string {
  return r.ok ? "ok" : `${r.error.kind} ${r.error.name}`;
}

describe("the hostile corpus against a pool of one shared with pinned, evicted and oversize sessions", () => {
  it("run() never rejects, and every stateless run ends as it would alone", { timeout: 600_000 }, async (t) => {
    const events = { evicted: 0, refused: 0, ended: 0 };
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1, maxPinned: 1 },
      sessions: { idleMs: 200, maxSnapshotBytes: 1 << 20 },
      limits: { timeoutMs: 10_000 },
      onEvent: (e) => {
        if (e.type === "session.evicted") events[e.error === undefined ? "evicted" : "refused"]++;
        if (e.type === "session.ended") events.ended++;
      },
    });
    const random = rng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const sessions: (Session | undefined)[] = Array.from({ length: SESSIONS }, () => undefined);
    const seen = { stateless: 0, session: 0, lost: 0 };
    try {
      for (let group = 0; group < GROUPS; group++) {
        const calls: { what: string; done: Promise<void> }[] = [];
        const used = new Set<number>();
        for (let n = 0; n < AT_ONCE; n++) {
          const slot = Math.floor(random() * (SESSIONS + 1));
          if (slot === SESSIONS || used.has(slot)) {
            // A stateless tenant with a corpus run: its outcome is the corpus's.
            const [code, limits, expected] = pick(PY_HOSTILE);
            const what = `step ${group}.${n} (seed ${SEED}): stateless ${JSON.stringify(code.slice(0, 60))}`;
            calls.push({
              what,
              done: sb.run({ language: "python", code, limits }).then((r) => {
                seen.stateless++;
                assert.equal(outcome(r), expected, `${what}: ${JSON.stringify(!r.ok && r.error).slice(0, 300)}`);
              }),
            });
            continue;
          }
          used.add(slot);
          const [code, limits] = pick(SESSION_CODE);
          const what = `step ${group}.${n} (seed ${SEED}): session ${slot} ${JSON.stringify(code.slice(0, 60))}`;
          calls.push({
            what,
            done: (async () => {
              // A session lost to a timeout, a memory cap or python.maxPinned is replaced by a new one.
              const s = (sessions[slot] ??= await sb.session({ language: "python" }));
              const r = await s.run({ code, limits });
              seen.session++;
              if (r.ok) return;
              assert.ok(ERROR_KINDS.includes(r.error.kind), `${what}: ${JSON.stringify(r.error)}`);
              if (r.error.name === "SessionLostError" || ["timeout", "memory"].includes(r.error.kind)) {
                seen.lost++;
                sessions[slot] = undefined;
                await s.close();
              }
            })(),
          });
        }
        const settled = await Promise.allSettled(calls.map((c) => bounded(c.done)));
        settled.forEach((s, i) => {
          if (s.status === "rejected") assert.fail(`${calls[i]!.what} rejected: ${String(s.reason)}`);
        });
      }
    } finally {
      await Promise.allSettled(sessions.flatMap((s) => (s ? [s.close()] : [])));
    }
    t.diagnostic(
      `seed ${SEED}: ${seen.stateless} stateless and ${seen.session} session runs; ${seen.lost} sessions lost and ` +
        `replaced; sessions evicted ${events.evicted}, refused eviction ${events.refused}, ended ${events.ended}`,
    );
    // The schedule went where the property is about: sessions moved, could not move, and were ended.
    assert.ok(seen.stateless > 0 && seen.session > 0 && events.evicted > 0 && events.refused > 0 && events.ended > 0);
  });
});
