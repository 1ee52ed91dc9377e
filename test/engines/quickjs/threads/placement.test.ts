// Where a waiting run goes (placement.ts), as a pure function of the workers' state: least load first;
// between equally loaded workers, the one readiest for it by its own word (still awake after its last
// run, then asleep on its doorbell, then back in its event loop); a worker's word never outweighs load.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { place, type Candidate } from "../../../../src/engines/quickjs/threads/placement.ts";
import { IDLE, LINGERING, TIDYING } from "../../../../src/engines/quickjs/threads/protocol.ts";

interface Fake extends Candidate {
  name: string;
}

const worker = (name: string, load: number, idleState: number, more: Partial<Candidate> = {}): Fake => ({
  name,
  dead: false,
  started: true,
  priorityStuck: false,
  load,
  idleState,
  stalled: () => false,
  ...more,
});

const opts = { now: 0, runsPerWorker: 8, closed: false };
const posted = (workers: Fake[]): string => {
  const p = place(workers, opts);
  return typeof p === "string" ? p : p.post.name;
};

describe("javascript placement", () => {
  it("sends a run to the least-loaded worker whatever the others say about themselves", () => {
    assert.equal(posted([worker("a", 1, LINGERING), worker("b", 0, TIDYING)]), "b");
  });

  it("between equally loaded workers prefers one awake, then one lingering, then the first", () => {
    assert.equal(posted([worker("a", 0, IDLE), worker("b", 0, LINGERING), worker("c", 0, TIDYING)]), "c");
    assert.equal(posted([worker("a", 0, IDLE), worker("b", 0, LINGERING)]), "b");
    assert.equal(posted([worker("a", 0, IDLE), worker("b", 0, IDLE)]), "a");
    assert.equal(posted([worker("a", 0, TIDYING), worker("b", 0, TIDYING)]), "a");
  });

  it("reads a state word it does not know (a worker writing garbage) as the least ready", () => {
    assert.equal(posted([worker("a", 0, 12345), worker("b", 0, LINGERING)]), "b");
    assert.equal(posted([worker("a", 0, -1), worker("b", 0, IDLE)]), "a");
  });

  it("skips full, stalled, stuck and starting workers, then grows or waits", () => {
    const full = worker("full", 8, LINGERING);
    const stalled = worker("stalled", 0, LINGERING, { stalled: () => true });
    const stuck = worker("stuck", 0, LINGERING, { priorityStuck: true });
    assert.equal(posted([full, stuck, worker("ok", 7, TIDYING)]), "ok");
    assert.equal(posted([full, stalled]), "grow");
    assert.equal(posted([full, stalled, worker("new", 0, IDLE, { started: false })]), "wait");
    assert.equal(place([full, stalled], { ...opts, closed: true }), "wait");
  });
});
