// One cache directory shared by several wasmcell installs and versions: installs with the same content
// share a snapshot key; nothing is evicted while the cache is under its budget; over it, the entry
// unused the longest goes first (with an event), and never one a live process holds a lease on.
// (Fake snapshot bytes: nothing is loaded into Pyodide. The "other process" is a real child process.)
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  cacheBudgetBytes,
  DEFAULT_CACHE_MAX_MB,
  evictCache,
  evictedEvent,
  leased,
  type Eviction,
} from "../../src/library/cache.ts";
import { sidecarFiles } from "../../src/engines/pyodide/launch.ts";
import {
  loadSnapshot,
  recordPath,
  snapshotKey,
  snapshotPath,
  snapshotProblem,
} from "../../src/engines/pyodide/boot-image.ts";
import { resolveOptions } from "../../src/options/index.ts";

const CACHE_MODULE = pathToFileURL(fileURLToPath(new URL("../../src/library/cache.ts", import.meta.url))).href;
const seal = resolveOptions({}).seal;
const dirs: string[] = [];
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A snapshot of `bytes` bytes with its record, last used `ageS` seconds ago. */
function writeSnapshot(cache: string, key: string, bytes: number, ageS: number): string {
  const file = snapshotPath(key, cache);
  const data = new Uint8Array(bytes).fill(key.charCodeAt(0));
  writeFileSync(file, data, { mode: 0o600 });
  writeFileSync(recordPath(file), `${createHash("sha256").update(data).digest("hex")}  ${basename(file)}\n`, {
    mode: 0o600,
  });
  const when = new Date(Date.now() - ageS * 1000);
  utimesSync(file, when, when);
  utimesSync(recordPath(file), when, when);
  return file;
}

/** Another process that leases `name` in `cache` and stays alive until killed. */
async function holder(cache: string, name: string): Promise<ChildProcess> {
  const code = `import { leaseEntry } from ${JSON.stringify(CACHE_MODULE)};
leaseEntry(${JSON.stringify(cache)}, ${JSON.stringify(name)}, ${JSON.stringify(join(cache, name))});
console.log("ready");
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    child.once("exit", (c) => reject(new Error(`holder exited ${c}`)));
  });
  return child;
}

const KB = 1024;

describe("a cache shared by installs and versions", () => {
  it("two installs of the same files share a key; a changed file makes another key; no path is in it", () => {
    const real = sidecarFiles();
    const install = () => {
      const root = tempDir("wasmcell-install-");
      for (const dir of ["pyodide", "sidecar", "python"]) mkdirSync(join(root, dir));
      cpSync(join(real.pyodideDir, "package.json"), join(root, "pyodide", "package.json"));
      cpSync(real.sidecarDir, join(root, "sidecar"), { recursive: true });
      cpSync(real.harness, join(root, "python", "harness.py"));
      return {
        ...real,
        pyodideDir: join(root, "pyodide"),
        sidecarDir: join(root, "sidecar"),
        harness: join(root, "python", "harness.py"),
      };
    };
    const a = install();
    const b = install();
    assert.equal(snapshotKey(undefined, a), snapshotKey(undefined, b));
    assert.equal(snapshotKey(undefined, a), snapshotKey(undefined));
    writeFileSync(b.harness, "# another version\n", { flag: "a" });
    assert.notEqual(snapshotKey(undefined, a), snapshotKey(undefined, b));
  });

  it("three versions under the budget: all stay, each verified and warm", () => {
    const cache = tempDir("wasmcell-cache-");
    const files = ["a", "b", "c"].map((v, i) => writeSnapshot(cache, v.repeat(24), 64 * KB, 300 - i * 100));
    const evicted = evictCache(cache, { keep: [files[2]!], budgetBytes: 1024 * KB });
    assert.deepEqual(evicted, []);
    for (const f of files) assert.equal(snapshotProblem(f), undefined, f);
  });

  it("over the budget, the one unused the longest goes, with an event; a live process's lease keeps its own", async () => {
    const cache = tempDir("wasmcell-cache-");
    // a: oldest, but a live process (another install) uses it; b: unused; c: just written by us.
    const a = writeSnapshot(cache, "a".repeat(24), 64 * KB, 300);
    const b = writeSnapshot(cache, "b".repeat(24), 64 * KB, 200);
    const c = writeSnapshot(cache, "c".repeat(24), 64 * KB, 0);
    const child = await holder(cache, basename(a));
    assert.equal(leased(cache, basename(a)), true);
    const told: Eviction[] = [];
    const evicted = evictCache(cache, { keep: [c], budgetBytes: 150 * KB, onEvicted: (e) => told.push(e) });
    assert.deepEqual(
      evicted.map((e) => e.file),
      [b],
    );
    assert.deepEqual(told, evicted);
    assert.equal(existsSync(b) || existsSync(recordPath(b)), false);
    assert.equal(snapshotProblem(a), undefined, "the leased one is intact");
    assert.equal(snapshotProblem(c), undefined);
    const event = evictedEvent(told[0]!);
    assert.equal(event.type, "cache.evicted");
    assert.equal(event.type === "cache.evicted" && event.file, b);
    assert.match(event.type === "cache.evicted" ? event.message : "", /removed .*bbbb.* to keep the cache under its/);

    // Still over budget with only leased and kept entries: nothing more goes.
    assert.deepEqual(evictCache(cache, { keep: [c], budgetBytes: 1 }), []);
    // The holder ends without releasing (killed): its lease counts for nothing, and the file can go.
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    assert.deepEqual(
      evictCache(cache, { keep: [c], budgetBytes: 100 * KB }).map((e) => e.file),
      [a],
    );
    assert.deepEqual(readdirSync(join(cache, "leases")), [], "the dead lease was removed");
  });

  it("a lease whose pid is gone, or names a process started at another time, holds nothing", () => {
    const cache = tempDir("wasmcell-cache-");
    const file = writeSnapshot(cache, "d".repeat(24), 8 * KB, 100);
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    mkdirSync(join(cache, "leases"));
    writeFileSync(join(cache, "leases", `${basename(file)}.${gone.stdout}`), `${gone.stdout} 1\n`);
    // Our own pid with a start time that is not ours: a reused pid.
    writeFileSync(join(cache, "leases", `${basename(file)}.${process.pid}`), `${process.pid} 1\n`);
    assert.equal(leased(cache, basename(file)), existsSync(`/proc/${process.pid}/stat`) ? false : true);
  });

  it("a package library of another version goes by the same rule: kept while leased, evicted when not", async () => {
    const cache = tempDir("wasmcell-cache-");
    const lib = join(cache, "packages-0123456789abcdef");
    mkdirSync(join(lib, "site"), { recursive: true });
    writeFileSync(join(lib, "site", "m.py"), "x = 1\n".repeat(20_000));
    const old = new Date(Date.now() - 1000_000);
    utimesSync(lib, old, old);
    const child = await holder(cache, basename(lib));
    assert.deepEqual(evictCache(cache, { keep: [], budgetBytes: 1 }), []);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    assert.deepEqual(
      evictCache(cache, { keep: [], budgetBytes: 1 }).map((e) => e.file),
      [lib],
    );
  });

  it("loading a snapshot leases it for this process and stamps its last use", async () => {
    const cache = tempDir("wasmcell-cache-");
    const file = writeSnapshot(cache, snapshotKey(undefined), 4 * KB, 1000);
    const s = await loadSnapshot({ seal, processMemoryMb: 512, cache });
    assert.ok(s);
    assert.equal(leased(cache, basename(file)), true);
    const other = writeSnapshot(cache, "e".repeat(24), 4 * KB, 10);
    // `file` was used just now, so the other one is the older by last use.
    assert.deepEqual(
      evictCache(cache, { keep: [], budgetBytes: 5 * KB }).map((e) => e.file),
      [other],
    );
  });

  it("the budget defaults to 1024 MiB and WASMCELL_CACHE_MAX_MB sets it", () => {
    const saved = process.env.WASMCELL_CACHE_MAX_MB;
    try {
      delete process.env.WASMCELL_CACHE_MAX_MB;
      assert.equal(DEFAULT_CACHE_MAX_MB, 1024);
      assert.equal(cacheBudgetBytes(), 1024 * 1024 * 1024);
      process.env.WASMCELL_CACHE_MAX_MB = "300";
      assert.equal(cacheBudgetBytes(), 300 * 1024 * 1024);
    } finally {
      if (saved === undefined) delete process.env.WASMCELL_CACHE_MAX_MB;
      else process.env.WASMCELL_CACHE_MAX_MB = saved;
    }
  });
});
