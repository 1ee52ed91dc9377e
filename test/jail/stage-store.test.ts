// The lifecycle of staged copies (src/jail/stage-store.ts): one copy per content key shared by the
// user's processes, never removed while a live process holds it, removed once nobody does and it is
// idle or past the byte budget; leftovers of dead processes cleaned; a store another user could have
// tampered with is refused, and an entry that is not ours is never trusted.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcessByStdio } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { Worker } from "node:worker_threads";
import { after, beforeEach, describe, it } from "node:test";
import { StageStore } from "../../src/jail/stage-store.ts";
import { fingerprint, stageReadable } from "../../src/jail/stage.ts";

const STORE_MODULE = new URL("../../src/jail/stage-store.ts", import.meta.url).href;
const KEY_A = "a".repeat(32);
const KEY_B = "b".repeat(32);
const KEY_C = "c".repeat(32);
const KEY_D = "d".repeat(32);
const isRoot = process.geteuid?.() === 0;

const base = mkdtempSync(join(tmpdir(), "wasmcell-stage-store-"));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
let root: string;
beforeEach(() => {
  root = join(base, `store-${n++}`);
});

/** Fills a copy: one file naming the process that made it. */
const build =
  (bytes = 0) =>
  (dir: string) =>
    writeFileSync(join(dir, "made-by"), `${process.pid}${"x".repeat(bytes)}`);

/** Another process that acquires `key` in `root`, prints the directory, and holds it until told to exit. */
function holder(key: string): Promise<{ dir: string; child: ChildProcessByStdio<Writable, Readable, null> }> {
  const script = `
    import { StageStore } from ${JSON.stringify(STORE_MODULE)};
    import { writeFileSync } from "node:fs";
    const dir = new StageStore(${JSON.stringify(root)}).acquire(${JSON.stringify(key)}, (d) => writeFileSync(d + "/made-by", String(process.pid)));
    console.log(dir);
    process.stdin.on("data", () => process.exit(0));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout.once("data", (d: Buffer) => resolve({ dir: d.toString().trim(), child }));
    child.once("exit", (code) => reject(new Error(`holder exited with ${code}`)));
  });
}

const exited = (child: { once(e: "exit", f: () => void): unknown }) =>
  new Promise<void>((resolve) => child.once("exit", () => resolve()));

/** Makes the copy `key` look last used `ms` ago. */
const age = (key: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  utimesSync(join(root, key), t, t);
};

describe("stage store", () => {
  it("makes a copy once; another process reuses it", () => {
    const store = new StageStore(root);
    const dir = store.acquire(KEY_A, build());
    assert.equal(readFileSync(join(dir, "made-by"), "utf8"), String(process.pid));
    assert.equal(
      store.acquire(KEY_A, () => assert.fail("built twice")),
      dir,
    );
    const script = `
      import { StageStore } from ${JSON.stringify(STORE_MODULE)};
      console.log(new StageStore(${JSON.stringify(root)}).acquire(${JSON.stringify(KEY_A)}, () => { throw new Error("built again") }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), dir);
  });

  it("never removes a copy a live process holds, and removes it once that process is gone", async () => {
    const { dir, child } = await holder(KEY_A);
    const store = new StageStore(root);
    const strict = { maxIdleMs: 0, maxUnusedBytes: 0 };
    age(KEY_A, 30 * 24 * 3600 * 1000);
    assert.deepEqual(store.collect(strict), { removed: [], inUse: [KEY_A], kept: [] });
    assert.ok(existsSync(join(dir, "made-by")));
    child.stdin.write("exit\n");
    await exited(child);
    // A clean exit drops the marker; the copy stays for the next process (within the budget).
    assert.deepEqual(
      readdirSync(root).filter((f) => f.includes(".use.")),
      [],
    );
    assert.ok(existsSync(dir));
    assert.deepEqual(store.collect(strict), { removed: [KEY_A], inUse: [], kept: [] });
    assert.ok(!existsSync(dir));
  });

  it("a thread that used the copy and ended drops only its own hold, not its process's", async () => {
    const store = new StageStore(root);
    const dir = store.acquire(KEY_A, build());
    const markers = () => readdirSync(root).filter((f) => f.includes(".use."));
    const worker = new Worker(
      `const { parentPort } = require("node:worker_threads");
       import(${JSON.stringify(STORE_MODULE)}).then(({ StageStore }) => {
         new StageStore(${JSON.stringify(root)}).acquire(${JSON.stringify(KEY_A)}, () => { throw new Error("built again") });
         parentPort.postMessage(require("node:fs").readdirSync(${JSON.stringify(root)}).filter((f) => f.includes(".use.")));
       });`,
      { eval: true },
    );
    const [whileUsed] = await Promise.all([
      new Promise<string[]>((resolve) => worker.once("message", resolve)),
      new Promise((resolve) => worker.once("exit", resolve)),
    ]);
    assert.equal(whileUsed.length, 2, "the thread held the copy too");
    assert.equal(markers().length, 1);
    assert.ok(markers()[0]!.endsWith(".0"), "the main thread's hold is left");
    assert.deepEqual(store.collect({ maxIdleMs: 0, maxUnusedBytes: 0 }).inUse, [KEY_A]);
    assert.ok(existsSync(dir));
  });

  it("a process killed without cleaning up protects nothing: its marker is dead", async () => {
    const { dir, child } = await holder(KEY_A);
    child.kill("SIGKILL");
    await exited(child);
    assert.equal(readdirSync(root).filter((f) => f.includes(".use.")).length, 1, "the marker is left behind");
    const r = new StageStore(root).collect({ maxIdleMs: 0 });
    assert.deepEqual(r.removed, [KEY_A]);
    assert.ok(!existsSync(dir));
    assert.deepEqual(readdirSync(root), [], "the dead marker is gone too");
  });

  it("a recycled pid protects nothing: a marker is a pid and its start time", () => {
    const store = new StageStore(root);
    store.acquire(KEY_B, build());
    const dir = join(root, KEY_A);
    mkdirSync(dir, { mode: 0o755 });
    // This process's pid with a start time it does not have: the process that wrote it is gone.
    writeFileSync(join(root, `${KEY_A}.use.${process.pid}.1.0`), "");
    age(KEY_A, 1000);
    assert.deepEqual(new StageStore(root).collect({ maxIdleMs: 0 }).removed, [KEY_A]);
  });

  it("keeps the most recently used unused copies within the count and byte budgets and removes idle ones", () => {
    const keys = [KEY_A, KEY_B, KEY_C, KEY_D];
    const maker = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { StageStore } from ${JSON.stringify(STORE_MODULE)};
         import { writeFileSync } from "node:fs";
         const s = new StageStore(${JSON.stringify(root)});
         for (const k of ${JSON.stringify(keys)}) s.acquire(k, (d) => writeFileSync(d + "/f", "x".repeat(1000)));`,
      ],
      { encoding: "utf8" },
    );
    assert.equal(maker.status, 0, maker.stderr);
    keys.forEach((k, i) => age(k, (4 - i) * 1000)); // A oldest … D newest
    const store = new StageStore(root);
    assert.deepEqual(store.collect({ maxUnusedCopies: 3 }), {
      removed: [KEY_A],
      inUse: [],
      kept: [KEY_D, KEY_C, KEY_B],
    });
    assert.deepEqual(store.collect({ maxUnusedBytes: 2500 }), { removed: [KEY_B], inUse: [], kept: [KEY_D, KEY_C] });
    assert.deepEqual(store.collect({ maxIdleMs: 1500 }), { removed: [KEY_C], inUse: [], kept: [KEY_D] });
  });

  it("cleans up what dead processes were building or removing, and leaves a live process's alone", async () => {
    const store = new StageStore(root);
    store.trustedRoot();
    const { child } = await holder(KEY_B);
    const start = readFileSync(`/proc/${child.pid}/stat`, "latin1").split(") ")[1]!.split(" ")[19];
    const live = join(root, `.building.${KEY_A}.${child.pid}.${start}.0.0`);
    const dead = join(root, `.trash.${KEY_A}.${child.pid}.1.0.0`);
    mkdirSync(live);
    mkdirSync(dead);
    writeFileSync(join(dead, "f"), "x");
    store.collect();
    assert.ok(existsSync(live));
    assert.ok(!existsSync(dead));
    child.stdin.write("exit\n");
    await exited(child);
    store.collect();
    assert.ok(!existsSync(live));
  });

  it("waits while a live collector has claimed the copy, and goes on once the claim is gone", async () => {
    const store = new StageStore(root);
    store.trustedRoot();
    const start = readFileSync("/proc/self/stat", "latin1").split(") ")[1]!.split(" ")[19];
    const claim = join(root, `${KEY_A}.gc.${process.pid}.${start}.0`);
    writeFileSync(claim, "");
    let got: string | undefined;
    const pending = holder(KEY_A).then((h) => {
      got = h.dir;
      return h;
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(got, undefined, "the holder did not use the claimed copy");
    rmSync(claim);
    const { dir, child } = await pending;
    assert.equal(dir, join(root, KEY_A));
    child.stdin.write("exit\n");
    await exited(child);
  });

  it("ignores a dead collector's claim", () => {
    const store = new StageStore(root);
    store.trustedRoot();
    writeFileSync(join(root, `${KEY_A}.gc.${process.pid}.1.0`), ""); // a dead collector (wrong start time)
    const dir = store.acquire(KEY_A, build());
    assert.ok(existsSync(join(dir, "made-by")));
    assert.ok(!existsSync(join(root, `${KEY_A}.gc.${process.pid}.1.0`)));
  });

  it("refuses a store root that is a symlink, another user's, or writable by others", () => {
    const elsewhere = join(base, `elsewhere-${n}`);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, root);
    assert.throws(() => new StageStore(root).acquire(KEY_A, build()), /not a directory owned by uid .*a symlink/);
    rmSync(root);
    mkdirSync(root, { mode: 0o777 });
    chmodSync(root, 0o777);
    assert.throws(() => new StageStore(root).acquire(KEY_A, build()), /writable only by it .*mode 777/);
    if (isRoot) {
      chmodSync(root, 0o755);
      chownSync(root, 65534, 65534);
      assert.throws(() => new StageStore(root).acquire(KEY_A, build()), /uid 65534/);
    }
    assert.deepEqual(readdirSync(elsewhere), [], "nothing was written through the symlink");
  });

  it("refuses a store whose parent others could rename it out of", () => {
    const open = join(base, `open-${n}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    assert.throws(() => new StageStore(join(open, "s")).trustedRoot(), /writable by others without the sticky bit/);
    chmodSync(open, 0o1777);
    assert.equal(new StageStore(join(open, "s")).trustedRoot(), join(open, "s"));
  });

  it("never trusts an entry that is not its own directory: a planted symlink is replaced, its target untouched", () => {
    const store = new StageStore(root);
    store.trustedRoot();
    const target = join(base, `target-${n}`);
    mkdirSync(target);
    writeFileSync(join(target, "made-by"), "someone else");
    symlinkSync(target, join(root, KEY_A));
    const dir = store.acquire(KEY_A, build());
    assert.equal(readFileSync(join(dir, "made-by"), "utf8"), String(process.pid));
    assert.equal(readFileSync(join(target, "made-by"), "utf8"), "someone else");
  });

  it("stageReadable: a copy every uid can read, keyed by content, made once per key", () => {
    const store = new StageStore(root);
    const src = join(base, `src-${n}`);
    mkdirSync(join(src, "sub"), { recursive: true, mode: 0o700 });
    writeFileSync(join(src, "sub", "f.txt"), "one", { mode: 0o600 });
    const first = stageReadable(src, store);
    assert.ok(first.endsWith(`/${fingerprint(src)}/${src.split("/").pop()}`));
    assert.equal(readFileSync(join(first, "sub", "f.txt"), "utf8"), "one");
    assert.equal(
      spawnSync("stat", ["-c", "%a", join(first, "sub"), join(first, "sub", "f.txt")]).stdout.toString(),
      "755\n644\n",
    );
    assert.equal(stageReadable(src, store), first);
    writeFileSync(join(src, "sub", "f.txt"), "changed");
    const second = stageReadable(src, store);
    assert.notEqual(second, first);
    assert.equal(readFileSync(join(second, "sub", "f.txt"), "utf8"), "changed");
  });
});
