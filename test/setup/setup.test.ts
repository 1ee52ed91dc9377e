// `wasmcell setup` from a fixture lock into a temporary cache: two tiny real .deb files built here with
// dpkg-deb, installed through --from (no network), every checksum checked, the result atomic and
// idempotent, and --check catching a changed file. (The snapshot step is exercised by the package
// tests on the real library: building one takes tens of seconds.)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ChecksumError, IntegrityError, SetupError } from "../../src/core/errors.ts";
import { checkSetup, setup } from "../../src/setup/index.ts";
import { installedLibrary } from "../../src/library/library.ts";
import { loadLock } from "../../src/library/lock.ts";
import { sha256File } from "../../src/library/tree.ts";
import { STAMPS_FILE, verifyLibrary } from "../../src/library/verify.ts";
import { runNode } from "../helpers/process.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const ROOT = "usr/lib/python3/dist-packages";

/** Builds python3-<name>_<version>_all.deb with the given files under dist-packages. */
function buildDeb(dir: string, name: string, version: string, files: Record<string, string>): string {
  const tree = mkdtempSync(join(dir, "pkg-"));
  mkdirSync(join(tree, "DEBIAN"));
  writeFileSync(
    join(tree, "DEBIAN", "control"),
    `Package: python3-${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: test <t@example.org>\nDescription: fixture\n`,
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(tree, ROOT, path, ".."), { recursive: true });
    writeFileSync(join(tree, ROOT, path), text);
  }
  const out = join(dir, `python3-${name}_${version}_all.deb`);
  execFileSync("dpkg-deb", ["--build", "--root-owner-group", tree, out], { stdio: "ignore" });
  rmSync(tree, { recursive: true, force: true });
  return out;
}

describe("wasmcell setup (fixture lock, --from DIR)", () => {
  let work: string;
  let debs: string;
  let goodLock: string;
  let lockEntry: (name: string, deb: string, installed: string) => object;

  before(() => {
    work = mkdtempSync(join(tmpdir(), "wasmcell-setup-"));
    debs = join(work, "debs");
    mkdirSync(debs);
    const alpha = buildDeb(debs, "wcalpha", "1.0-1", {
      "wcalpha/__init__.py": "VALUE = 41\ndef answer():\n    return VALUE + 1\n",
      "wcalpha/tests/test_big.py": "assert False\n", // test suites are left out of the library
      "wcalpha-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: wcalpha\nVersion: 1.0\n",
    });
    const beta = buildDeb(debs, "wcbeta", "2.0-1", { "wcbeta.py": "from wcalpha import answer\nX = answer()\n" });
    lockEntry = (name, deb, installed) => ({
      name,
      version: name === "wcalpha" ? "1.0" : "2.0",
      imports: [name],
      preload: true,
      source: {
        debian: `python3-${name}`,
        version: name === "wcalpha" ? "1.0-1" : "2.0-1",
        architecture: "all",
        filename: `pool/main/w/${name}/python3-${name}_${name === "wcalpha" ? "1.0-1" : "2.0-1"}_all.deb`,
        sha256: deb,
      },
      installedSha256: installed,
    });
    // The tree hashes, as scripts/lock-packages.ts computes them: filled in by a first install attempt.
    const placeholder = "0".repeat(64);
    goodLock = join(work, "good.lock.json");
    writeLock(goodLock, [
      lockEntry("wcalpha", sha256File(alpha), placeholder),
      lockEntry("wcbeta", sha256File(beta), placeholder),
    ]);
    // Learn the real tree hashes from the mismatch errors (and check those errors name both sums).
    const hashes: string[] = [];
    for (const name of ["wcalpha", "wcbeta"]) {
      const deb = name === "wcalpha" ? alpha : beta;
      const probe = join(work, `probe-${name}.json`);
      writeLock(probe, [lockEntry(name, sha256File(deb), placeholder)]);
      const cache = join(work, `probe-cache-${name}`);
      try {
        execFileSync(
          process.execPath,
          [MAIN, "setup", "--from", debs, "--lock", probe, "--cache-dir", cache, "--no-snapshot"],
          { stdio: "pipe" },
        );
        assert.fail("a lock with a wrong tree hash must not install");
      } catch (error) {
        const stderr = String((error as { stderr?: Buffer }).stderr);
        const m = /got ([0-9a-f]{64})/.exec(stderr);
        assert.ok(m, stderr);
        hashes.push(m[1]!);
      }
    }
    writeLock(goodLock, [
      lockEntry("wcalpha", sha256File(alpha), hashes[0]!),
      lockEntry("wcbeta", sha256File(beta), hashes[1]!),
    ]);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  function writeLock(path: string, packages: object[]): void {
    writeFileSync(path, JSON.stringify({ lockVersion: 1, distribution: "fixture", root: ROOT, packages }, null, 2));
  }

  test("installs, records what it did, and a second run is a no-op", async () => {
    const cache = join(work, "cache-ok");
    const first = await setup({ from: debs, lockPath: goodLock, cacheDir: cache, snapshot: false });
    assert.equal(first.status, "installed");
    const lib = installedLibrary({ cache, lock: loadLock(goodLock) });
    assert.ok(lib, "the library is found where the engines look");
    assert.equal(readFileSync(join(lib.site, "wcalpha", "__init__.py"), "utf8").includes("VALUE = 41"), true);
    assert.equal(existsSync(join(lib.site, "wcalpha", "tests")), false, "test suites are left out");
    assert.ok(
      readdirSync(join(lib.site, "wcalpha", "__pycache__")).some((n) => n.includes("cpython-314")),
      "precompiled with Pyodide's interpreter",
    );
    assert.deepEqual(
      first.manifest.packages.map((p) => p.debian),
      ["python3-wcalpha", "python3-wcbeta"],
    );
    assert.deepEqual(first.manifest.preload, ["wcalpha", "wcbeta"]);
    assert.ok(first.manifest.files.count >= 3);
    assert.deepEqual(
      readdirSync(cache).filter((n) => n.startsWith(".setup-")),
      [],
      "no staging directory left",
    );

    const second = await setup({ from: debs, lockPath: goodLock, cacheDir: cache, snapshot: false });
    assert.equal(second.status, "up-to-date");
    assert.equal(second.manifest.createdAt, first.manifest.createdAt, "nothing was rebuilt");

    const cli = await runNode([
      MAIN,
      "setup",
      "--from",
      debs,
      "--lock",
      goodLock,
      "--cache-dir",
      cache,
      "--no-snapshot",
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /up to date \(2 packages/);
  });

  test("a .deb that differs from the lock: a clear error naming the package and both checksums, nothing installed", async () => {
    const cache = join(work, "cache-bad");
    const tampered = join(work, "tampered");
    mkdirSync(tampered);
    // Same file names, other bytes: a .deb swapped on the mirror or on the USB stick.
    buildDeb(tampered, "wcalpha", "1.0-1", { "wcalpha/__init__.py": "import os\nos.system('evil')\n" });
    execFileSync("cp", [join(debs, "python3-wcbeta_2.0-1_all.deb"), tampered]);
    const expected = JSON.parse(readFileSync(goodLock, "utf8")).packages[0].source.sha256 as string;
    const actual = sha256File(join(tampered, "python3-wcalpha_1.0-1_all.deb"));
    await assert.rejects(
      setup({ from: tampered, lockPath: goodLock, cacheDir: cache, snapshot: false }),
      (error: unknown) => {
        assert.ok(error instanceof ChecksumError);
        assert.equal(error.code, "SETUP_FAILED");
        assert.match(error.message, /python3-wcalpha 1\.0-1/);
        assert.ok(error.message.includes(expected) && error.message.includes(actual), error.message);
        return true;
      },
    );
    assert.equal(installedLibrary({ cache, lock: loadLock(goodLock) }), undefined);
    assert.deepEqual(readdirSync(cache), [], "nothing half-installed, no staging left");

    const cli = await runNode([
      MAIN,
      "setup",
      "--from",
      tampered,
      "--lock",
      goodLock,
      "--cache-dir",
      cache,
      "--no-snapshot",
    ]);
    assert.equal(cli.code, 3);
    assert.match(cli.stderr, /checksum mismatch for python3-wcalpha 1\.0-1 \(\.deb\)/);
  });

  test("a missing .deb in --from and a malformed lock are clear errors", async () => {
    const empty = join(work, "empty");
    mkdirSync(empty, { recursive: true });
    await assert.rejects(
      setup({ from: empty, lockPath: goodLock, cacheDir: join(work, "cache-missing"), snapshot: false }),
      (e: unknown) => e instanceof SetupError && /python3-wcalpha_1\.0-1_all\.deb .* is not in/.test(e.message),
    );
    const badLock = join(work, "bad.lock.json");
    writeFileSync(
      badLock,
      JSON.stringify({ lockVersion: 1, distribution: "x", root: ROOT, packages: [{ name: "x" }] }),
    );
    await assert.rejects(
      setup({ from: empty, lockPath: badLock, cacheDir: join(work, "cache-x"), snapshot: false }),
      (e: unknown) => e instanceof SetupError && /invalid at packages\.0\./.test(e.message),
    );
  });

  test("--check passes on a fresh install and names a tampered, added or removed file", async () => {
    const cache = join(work, "cache-check");
    await setup({ from: debs, lockPath: goodLock, cacheDir: cache, snapshot: false });
    assert.deepEqual(checkSetup({ lockPath: goodLock, cacheDir: cache, snapshot: false }).problems, []);
    const ok = await runNode([MAIN, "setup", "--check", "--lock", goodLock, "--cache-dir", cache, "--no-snapshot"]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);

    const lib = installedLibrary({ cache, lock: loadLock(goodLock) })!;
    const target = join(lib.site, "wcbeta.py");
    chmodSync(target, 0o644);
    writeFileSync(target, "X = 'planted'\n");
    writeFileSync(join(lib.site, "wcalpha", "extra.py"), "");
    const result = checkSetup({ lockPath: goodLock, cacheDir: cache, snapshot: false });
    assert.equal(result.ok, false);
    assert.ok(
      result.problems.some((p) => p.startsWith("modified: site/wcbeta.py")),
      result.problems.join("\n"),
    );
    assert.ok(result.problems.includes("added: site/wcalpha/extra.py"), result.problems.join("\n"));

    const bad = await runNode([MAIN, "setup", "--check", "--lock", goodLock, "--cache-dir", cache, "--no-snapshot"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /modified: site\/wcbeta\.py/);
    // A rebuild (--force) puts it right.
    await setup({ from: debs, lockPath: goodLock, cacheDir: cache, snapshot: false, force: true });
    assert.equal(checkSetup({ lockPath: goodLock, cacheDir: cache, snapshot: false }).ok, true);
  });

  test("the engines' check at start: passes on a fresh install, names a changed, added, removed or planted file", async () => {
    const cache = join(work, "cache-verify");
    const lock = loadLock(goodLock);
    await setup({ from: debs, lockPath: goodLock, cacheDir: cache, snapshot: false });
    const lib = installedLibrary({ cache, lock })!;
    // setup recorded every file's stamp: nothing needs hashing.
    assert.deepEqual(verifyLibrary(lib), { rehashed: 0 });
    const refused = (pattern: RegExp, file: string) => (e: unknown) =>
      e instanceof IntegrityError && e.code === "INTEGRITY" && e.file === file && pattern.test(e.message);

    // The same bytes written again (a new ctime): re-hashed, accepted, and the stamp recorded.
    const beta = join(lib.site, "wcbeta.py");
    const original = readFileSync(beta);
    chmodSync(beta, 0o644);
    writeFileSync(beta, original);
    assert.deepEqual(verifyLibrary(lib), { rehashed: 1 });
    assert.deepEqual(verifyLibrary(lib), { rehashed: 0 });

    // Same size, same mtime, other bytes: the ctime moved, so it is hashed and refused.
    const { mtime } = statSync(beta);
    writeFileSync(beta, Buffer.from(original.toString("utf8").replace(/\w/, "Z")));
    utimesSync(beta, mtime, mtime);
    assert.throws(() => verifyLibrary(lib), refused(/was modified after setup \(sha256 [0-9a-f]{64}, recorded/, beta));

    // Put back (the same bytes again pass), then the next tamper.
    writeFileSync(beta, original);
    assert.deepEqual(verifyLibrary(lib), { rehashed: 1 });
    const extra = join(lib.site, "wcalpha", "extra.py");
    writeFileSync(extra, "");
    assert.throws(() => verifyLibrary(lib), refused(/was added after setup/, extra));
    rmSync(extra);
    rmSync(beta);
    assert.throws(() => verifyLibrary(lib), refused(/was removed after setup/, beta));
    writeFileSync(beta, original);
    const link = join(lib.site, "wcalpha", "planted.py");
    symlinkSync("/etc/passwd", link);
    assert.throws(() => verifyLibrary(lib), refused(/not a regular file/, link));
    rmSync(link);
    const listing = join(lib.dir, "files.sha256");
    const listed = readFileSync(listing);
    chmodSync(listing, 0o644);
    writeFileSync(listing, listed.toString("utf8") + `${"0".repeat(64)}  wcalpha/planted.py\n`);
    assert.throws(() => verifyLibrary(lib), refused(/does not match manifest\.json/, listing));
    writeFileSync(listing, listed);

    // No stamps (an install from before they were recorded): everything hashed once, then recorded.
    rmSync(join(lib.dir, STAMPS_FILE));
    assert.ok(verifyLibrary(lib).rehashed > 1);
    assert.deepEqual(verifyLibrary(lib), { rehashed: 0 });
  });

  test("the shipped lock parses and pins every package to one Debian version", () => {
    const { lock } = loadLock();
    assert.ok(lock.packages.length >= 10);
    for (const p of lock.packages) assert.match(p.source.filename, new RegExp(`/${p.source.debian}_`));
  });
});
