// The session stores: the same contract in memory and on disk; on disk also 0600 files, atomic
// replacement, the size budget (least recently used first), ids that cannot name a path, and locks
// that hold across processes (two servers on one directory never run one session at once).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { runNode } from "../helpers/process.ts";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { DiskSessionStore } from "../../src/stores/disk.ts";
import { MemorySessionStore } from "../../src/stores/memory.ts";
import type { SessionStore } from "../../src/stores/store.ts";

const root = mkdtempSync(join(tmpdir(), "wasmcell-store-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const stores: [string, () => SessionStore][] = [
  ["memory", () => new MemorySessionStore()],
  ["disk", () => new DiskSessionStore({ dir: join(root, `s${n++}`) })],
];

for (const [name, make] of stores) {
  describe(`${name} session store`, () => {
    it("get/put/delete: a put replaces, a delete of nothing is fine", async () => {
      const store = make();
      assert.equal(await store.get("a"), undefined);
      await store.put("a", new Uint8Array([1, 2]));
      await store.put("a", new Uint8Array([3]));
      assert.deepEqual([...(await store.get("a"))!], [3]);
      await store.delete("a");
      await store.delete("a");
      assert.equal(await store.get("a"), undefined);
      await store.close();
    });

    it("a lock is exclusive until released or expired", async () => {
      const store = make();
      const held = await store.lock("a", 10_000);
      assert.ok(held);
      assert.equal(await store.lock("a", 10_000), undefined);
      assert.equal(await held.extend(10_000), true);
      await held.release();
      const again = await store.lock("a", 1);
      assert.ok(again);
      await new Promise((r) => setTimeout(r, 5));
      assert.ok(await store.lock("a", 10_000), "an expired lock is free");
      assert.equal(await again.extend(10), false, "the expired holder lost it");
      await store.close();
    });
  });
}

describe("disk session store", () => {
  it("writes 0600 files in a 0700 directory, leaving no temp file behind", async () => {
    const dir = join(root, "perm");
    const store = new DiskSessionStore({ dir });
    await store.put("x", new Uint8Array(10));
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, "x.snapshot")).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ["x.snapshot"]);
  });

  it("ids that could name a path are refused (attack: a session id as path traversal)", async () => {
    const store = new DiskSessionStore({ dir: join(root, "ids") });
    for (const id of ["../x", "a/b", "", ".", "..", "a\0b", "x".repeat(129), "/etc/passwd"]) {
      await assert.rejects(store.put(id, new Uint8Array(1)), InvalidOptionError, JSON.stringify(id));
      await assert.rejects(store.get(id), InvalidOptionError);
    }
  });

  it("a memory store with a budget drops the least recently used blobs first and says so", async () => {
    const store = new MemorySessionStore({ maxBytes: 250 });
    await store.put("old", new Uint8Array(100));
    await store.put("mid", new Uint8Array(100));
    await store.get("old"); // used: now "mid" is the least recently used
    await store.put("new", new Uint8Array(100));
    assert.equal(await store.get("mid"), undefined);
    assert.equal(await store.evicted("mid"), true);
    assert.ok(await store.get("old"));
    assert.ok(await store.get("new"));
    assert.equal(store.bytes, 200);
    await store.put("mid", new Uint8Array(10));
    assert.equal(await store.evicted("mid"), false);
    await assert.rejects(store.put("big", new Uint8Array(251)), InvalidOptionError);
    assert.throws(() => new MemorySessionStore({ maxBytes: 0 }), InvalidOptionError);
  });

  it("past its budget, the least recently used blobs go first", async () => {
    const store = new DiskSessionStore({ dir: join(root, "lru"), maxBytes: 250 });
    await store.put("old", new Uint8Array(100));
    await new Promise((r) => setTimeout(r, 20));
    await store.put("mid", new Uint8Array(100));
    await new Promise((r) => setTimeout(r, 20));
    await store.get("old"); // used: now "mid" is the least recently used
    await new Promise((r) => setTimeout(r, 20));
    await store.put("new", new Uint8Array(100));
    assert.equal(await store.get("mid"), undefined);
    assert.ok(await store.get("old"));
    assert.ok(await store.get("new"));
  });

  it("a lock holds across processes; a holder killed without releasing frees it when its lease lapses", async () => {
    const dir = join(root, "cross");
    const store = new DiskSessionStore({ dir });
    // Another process takes the lock for 1.5 s and is killed holding it (it never releases).
    const held = await runNode(
      [
        "--input-type=module",
        "-e",
        `${TAKE}\nconst l = await take(1500);\nprocess.stdout.write(l ? "took" : "busy");\nprocess.kill(process.pid, "SIGKILL");`,
      ],
      { env: { ...process.env, STORE_DIR: dir } },
    );
    assert.equal(held.stdout, "took", held.stderr);
    assert.equal(await store.lock("s", 10_000), undefined, "held by the killed process's lease");
    await new Promise((r) => setTimeout(r, 1600));
    const mine = await store.lock("s", 10_000);
    assert.ok(mine, "the lapsed lock was taken over");
    // And the other way round: this process holds it, another process is refused.
    const refused = await runNode(
      ["--input-type=module", "-e", `${TAKE}\nprocess.stdout.write((await take(1000)) ? "took" : "busy");`],
      { env: { ...process.env, STORE_DIR: dir } },
    );
    assert.equal(refused.stdout, "busy", refused.stderr);
    await mine.release();
    assert.deepEqual(readdirSync(dir), [], "release leaves no lock file behind");
  });

  it("of several processes racing for one lapsed lock, exactly one takes it", async () => {
    const dir = join(root, "race");
    const store = new DiskSessionStore({ dir });
    for (let round = 0; round < 3; round++) {
      const lapsed = await store.lock("s", 1);
      assert.ok(lapsed);
      await new Promise((r) => setTimeout(r, 5));
      const racers = await Promise.all(
        Array.from({ length: 6 }, () =>
          runNode(
            [
              "--input-type=module",
              "-e",
              `${TAKE}\nconst l = await take(5000);\nprocess.stdout.write(l ? "took" : "busy");`,
            ],
            { env: { ...process.env, STORE_DIR: dir } },
          ),
        ),
      );
      const took = racers.filter((r) => r.stdout === "took").length;
      assert.equal(took, 1, JSON.stringify(racers.map((r) => r.stdout + r.stderr)));
      assert.equal(await lapsed.extend(10_000), false, "the lapsed holder does not get it back");
      await lapsed.release();
      assert.equal(await store.lock("s", 10_000), undefined, "the winner's lock survived the old holder's release");
      // The winner exited without releasing: let its lease lapse for the next round.
      rmSync(join(dir, ".s.lock"));
    }
  });
});

/** Child-process prelude: `take(ms)` takes session "s"'s lock in $STORE_DIR's disk store. */
const TAKE = `const { DiskSessionStore } = await import(${JSON.stringify(pathToFileURL(new URL("../../src/stores/disk.ts", import.meta.url).pathname).href)});
const take = (ms) => new DiskSessionStore({ dir: process.env.STORE_DIR }).lock("s", ms);`;
