// The Pyodide snapshot cache's integrity: a snapshot is used only when its bytes match the sha256
// recorded beside it when it was written; a mismatch is reported, the file removed (the engine then
// builds a new one, with an `integrity` event); a file changed in place after it was verified is
// caught at the next sidecar launch. (Fake bytes here: nothing is loaded into Pyodide.)
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, describe, it } from "node:test";
import { EngineStartError } from "../../../src/core/errors.ts";
import {
  checkedSnapshot,
  loadSnapshot,
  recordPath,
  snapshotCached,
  snapshotKey,
  snapshotPath,
  snapshotProblem,
  type SnapshotRejection,
} from "../../../src/engines/pyodide/boot-image.ts";
import { resolveOptions } from "../../../src/options/index.ts";

const seal = resolveOptions({}).seal;
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function cache(bytes: Uint8Array, recorded?: string): { cache: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-snapshot-"));
  dirs.push(dir);
  const file = snapshotPath(snapshotKey(undefined), dir);
  writeFileSync(file, bytes, { mode: 0o600 });
  const sha = recorded ?? createHash("sha256").update(bytes).digest("hex");
  writeFileSync(recordPath(file), `${sha}  ${basename(file)}\n`, { mode: 0o600 });
  return { cache: dir, file };
}

describe("snapshot integrity", () => {
  it("a snapshot matching its record is used, by an open read-only descriptor", async () => {
    const bytes = new Uint8Array(100_000).fill(7);
    const c = cache(bytes);
    assert.equal(snapshotCached(undefined, c.cache), true);
    assert.equal(snapshotProblem(c.file), undefined);
    const s = await loadSnapshot({ seal, processMemoryMb: 512, cache: c.cache });
    assert.ok(s && "fd" in s.source, "loaded by descriptor");
    assert.equal(s.bytes, bytes.length);
    assert.equal(checkedSnapshot(s), s);
  });

  it("bytes that differ from the record: told, removed, not used", async () => {
    const c = cache(new Uint8Array(5000).fill(1), "ab".repeat(32));
    assert.match(snapshotProblem(c.file) ?? "", /recorded abab/);
    const told: SnapshotRejection[] = [];
    const s = await loadSnapshot({ seal, processMemoryMb: 512, cache: c.cache, onRejected: (r) => told.push(r) });
    assert.equal(s, undefined);
    assert.equal(told.length, 1);
    assert.equal(told[0]!.file, c.file);
    assert.match(told[0]!.message, /sha256 is [0-9a-f]{64}, not the abab/);
    assert.equal(existsSync(c.file), false);
    assert.equal(existsSync(recordPath(c.file)), false);
  });

  it("a snapshot without a record is not cached and not used", async () => {
    const c = cache(new Uint8Array(10).fill(2));
    rmSync(recordPath(c.file));
    assert.equal(snapshotCached(undefined, c.cache), false);
    const told: SnapshotRejection[] = [];
    assert.equal(
      await loadSnapshot({ seal, processMemoryMb: 512, cache: c.cache, onRejected: (r) => told.push(r) }),
      undefined,
    );
    assert.match(told[0]?.message ?? "", /no recorded sha256/);
  });

  it("a file changed in place after it was verified is refused at the next launch", async () => {
    const bytes = new Uint8Array(70_000).fill(3);
    const c = cache(bytes);
    const s = (await loadSnapshot({ seal, processMemoryMb: 512, cache: c.cache }))!;
    // The same bytes rewritten: the stat moved, the content did not: still fine.
    writeFileSync(c.file, bytes);
    assert.equal(checkedSnapshot(s), s);
    writeFileSync(c.file, new Uint8Array(70_000).fill(4));
    assert.throws(
      () => checkedSnapshot(s),
      (e: unknown) =>
        e instanceof EngineStartError && e.message.includes(c.file) && /changed after it was verified/.test(e.message),
    );
  });
});
