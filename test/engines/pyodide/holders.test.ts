// Who gives a pool sidecar back when a run waits (src/engines/pyodide/holders.ts), with plain objects
// for sidecars and sessions: the policy alone — evict what can move, pin what cannot within
// python.maxPinned, past it end the least recently used session that cannot move. The same policy
// with real sidecars: test/security/session-pins-every-sidecar.test.ts and its -corpus twin.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionHolders } from "../../../src/engines/pyodide/holders.ts";
import type { SidecarProcess } from "../../../src/engines/pyodide/sidecar-client.ts";
import type { SidecarState } from "../../../src/engines/pyodide/state-backend.ts";
import type { DataSession } from "../../../src/engines/sessions/data-session.ts";

type PyodideSession = DataSession<SidecarState>;
import { WarmPool } from "../../../src/pool/pool.ts";

interface Sidecar {
  id: number;
  killed: boolean;
  jail: { exited: Promise<void> };
  kill(): void;
}

/** A session as the holders see it: it holds one sidecar, and evicts, pins or ends as told. */
class FakeSession {
  sidecar: Sidecar | undefined;
  unmovable: string | undefined;
  /** Whether its state could move if it were evicted now. */
  canMove: boolean;
  lastUsed: number;
  ended: string | undefined;
  evictions = 0;
  readonly #holders: SessionHolders;

  constructor(holders: SessionHolders, sidecar: Sidecar, lastUsed: number, canMove: boolean) {
    this.#holders = holders;
    this.sidecar = sidecar;
    this.lastUsed = lastUsed;
    this.canMove = canMove;
  }

  evict(): Promise<boolean> {
    this.evictions++;
    if (!this.canMove) {
      this.unmovable = "the session holds open files";
      return Promise.resolve(false);
    }
    const sidecar = this.sidecar!;
    this.sidecar = undefined;
    this.#holders.idle(this.#self, false);
    this.#holders.release(sidecar as unknown as SidecarProcess, true);
    return Promise.resolve(true);
  }

  /** Where its state lives, as the holders read it (to take the sidecar out of the pool for it). */
  get live(): { sidecar: Sidecar } | undefined {
    return this.sidecar ? { sidecar: this.sidecar } : undefined;
  }

  /** A real session may be pinned while it cannot move and holds a sidecar between runs. */
  get pinnable(): boolean {
    return this.unmovable !== undefined && this.sidecar !== undefined;
  }

  end(why: string): Promise<boolean> {
    const sidecar = this.sidecar!;
    this.sidecar = undefined;
    this.ended = why;
    this.#holders.idle(this.#self, false);
    this.#holders.release(sidecar as unknown as SidecarProcess, true);
    return Promise.resolve(true);
  }

  /** It ran again (`unmovable` is cleared as a real session's run clears it) and is idle again. */
  ranAgain(canMove: boolean, at: number): void {
    this.unmovable = undefined;
    this.canMove = canMove;
    this.lastUsed = at;
    this.#holders.idle(this.#self, false);
    this.#holders.idle(this.#self, true);
  }

  get #self(): PyodideSession {
    return this as unknown as PyodideSession;
  }
}

function setup(size: number, maxPinned: number) {
  let made = 0;
  const sidecars: Sidecar[] = [];
  const pool = new WarmPool<SidecarProcess>({
    name: "test pool",
    size,
    maxQueue: 16,
    create: () => {
      const sidecar: Sidecar = {
        id: ++made,
        killed: false,
        jail: { exited: Promise.resolve() },
        kill() {
          this.killed = true;
        },
      };
      sidecars.push(sidecar);
      return Promise.resolve(sidecar as unknown as SidecarProcess);
    },
    destroy: () => Promise.resolve(),
    isAlive: (s) => !(s as unknown as Sidecar).killed,
  });
  const holders = new SessionHolders(pool, size, maxPinned);
  /** A session that took a pool sidecar and is idle holding it. */
  const open = async (lastUsed: number, canMove: boolean) => {
    const sidecar = (await pool.acquire()) as unknown as Sidecar;
    const session = new FakeSession(holders, sidecar, lastUsed, canMove);
    holders.idle(session as unknown as PyodideSession, true);
    return session;
  };
  /** A run waiting for a pool sidecar, as the engine takes one. */
  const take = () => {
    const taken = pool.acquire();
    holders.reclaim();
    return taken as unknown as Promise<Sidecar>;
  };
  return { pool, holders, open, take, sidecars };
}

describe("SessionHolders: a waiting run gets a sidecar from the sessions idle between runs", () => {
  it("the least recently used session that can move is evicted, the others keep theirs", async () => {
    const { pool, open, take } = setup(2, 2);
    await pool.prewarm();
    await pool.whenFull();
    const older = await open(1, true);
    const newer = await open(2, true);
    const sidecar = await take();
    assert.equal(older.evictions, 1);
    assert.equal(newer.evictions, 0);
    assert.equal(older.sidecar, undefined);
    assert.ok(newer.sidecar && newer.sidecar !== sidecar);
  });

  it("a session that cannot move keeps its sidecar beside the pool; the run gets a new one", async () => {
    const { pool, holders, open, take } = setup(1, 2);
    await pool.prewarm();
    const held = await open(1, false);
    const sidecar = await take();
    assert.equal(holders.pinned, 1);
    assert.equal(held.ended, undefined);
    assert.ok(held.sidecar && held.sidecar !== sidecar, "the pool started another sidecar for the run");
  });

  it("past maxPinned the least recently used idle session that cannot move ends, pinned or not", async () => {
    const { pool, holders, open, take } = setup(1, 1);
    await pool.prewarm();
    const a = await open(1, false);
    pool.release((await take()) as unknown as SidecarProcess, true); // a is pinned
    const b = await open(2, false);
    await take();
    // b cannot move either, and the one place beside the pool is a's: a (used first) ends, b is pinned.
    assert.match(a.ended ?? "", /open files.*python\.maxPinned/);
    assert.equal(a.sidecar, undefined);
    assert.equal(b.ended, undefined);
    assert.equal(holders.pinned, 1);
  });

  it("past maxPinned, when the session in the pool is the least recently used, it is the one ended", async () => {
    const { pool, holders, open, take } = setup(1, 1);
    await pool.prewarm();
    const a = await open(5, false);
    const run = await take(); // a is pinned
    pool.release(run as unknown as SidecarProcess, true);
    const b = await open(1, false); // used before a
    await take();
    assert.equal(a.ended, undefined);
    assert.match(b.ended ?? "", /python\.maxPinned/);
    assert.equal(holders.pinned, 1);
  });

  it("maxPinned 0: a session that cannot move is ended as soon as its sidecar is needed", async () => {
    const { pool, holders, open, take } = setup(1, 0);
    await pool.prewarm();
    const held = await open(1, false);
    await take();
    assert.match(held.ended ?? "", /python\.maxPinned is 0/);
    assert.equal(holders.pinned, 0);
  });

  it("a refusal is remembered: the next waiting run does not save the session again", async () => {
    const { pool, open, take } = setup(1, 0);
    await pool.prewarm();
    const held = await open(1, false);
    held.unmovable = "refused when it was last idle";
    await take();
    assert.equal(held.evictions, 0, "no second save of a state already refused");
    assert.match(held.ended ?? "", /refused when it was last idle/);
  });

  it("a pinned session that ran and can move gives its sidecar up as soon as it is idle (killed)", async () => {
    const { pool, holders, open, take } = setup(1, 2);
    await pool.prewarm();
    const held = await open(1, false);
    const pinnedSidecar = held.sidecar!;
    await take();
    assert.equal(holders.pinned, 1);
    held.ranAgain(true, 10);
    await Promise.resolve();
    assert.equal(held.sidecar, undefined, "evicted");
    assert.equal(holders.pinned, 0);
    assert.equal(pinnedSidecar.killed, true, "a sidecar beside the pool has no slot to go back to");
    await holders.exited();
  });

  it("a run waits for other runs, never for a session that cannot give its sidecar", async () => {
    const { pool, open, take } = setup(1, 2);
    await pool.prewarm();
    const held = await open(1, false);
    const first = take(); // held is pinned beside the pool; a new sidecar starts for the slot
    const second = take(); // nothing idle is left to take: it waits for the first run's sidecar
    const sidecar = await first;
    assert.equal(held.ended, undefined, "a pinned session is not ended for a run that can wait on a run");
    pool.release(sidecar as unknown as SidecarProcess, true);
    assert.equal(await second, sidecar);
  });
});
