// `wasmcell run --json … | consumer`: the whole JSON reaches a consumer that reads slower than the
// CLI writes (the pipe buffer fills, the rest of the write is pending when the command is done), and
// --json does not shorten arrays or objects.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const run = promisify(execFile);

describe("wasmcell run --json through a real pipe", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wasmcell-pipe-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("delivers a result larger than the pipe buffer whole to a slow consumer, uncut", async () => {
    const out = join(dir, "out.json");
    // 5,000 entries (past the old 1,000-entry cut) of ~100 bytes: ~500 KB, far over a 64 KiB pipe buffer.
    const code = `Array.from({ length: 5000 }, (_, i) => ({ i, pad: "x".repeat(80) }))`;
    const script = `"${process.execPath}" "${MAIN}" run --json --lang javascript -e '${code}' | (sleep 1; cat > "${out}")`;
    await run("/bin/sh", ["-c", script], { timeout: 60_000 });
    const text = await readFile(out, "utf8");
    assert.ok(text.length > 400_000, `only ${text.length} bytes arrived`);
    const parsed = JSON.parse(text) as { ok: boolean; value: { i: number; pad: string }[] };
    assert.equal(parsed.ok, true);
    assert.equal(parsed.value.length, 5000);
    assert.deepEqual(parsed.value[4999], { i: 4999, pad: "x".repeat(80) });
  });
});
