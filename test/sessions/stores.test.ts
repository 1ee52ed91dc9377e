// The session stores: the same contract in memory and on disk; on disk also 0600 files, atomic
// replacement, the size budget (least recently used first) and ids that cannot name a path.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { InvalidOptionError } from "../../src/errors.ts";
import { DiskSessionStore } from "../../src/sessions/disk.ts";
import { MemorySessionStore } from "../../src/sessions/memory.ts";
import type { SessionStore } from "../../src/sessions/store.ts";

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
});
