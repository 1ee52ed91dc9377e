// Cold start with and without setup. Without: the first run says (onEvent / the CLI's stderr) that the
// engine is being built and roughly how long that takes, and is served by a cold interpreter right
// away rather than after the build and a second start. With: no build event, the library is there.
// Each case runs in a child process with its own WASMCELL_CACHE_DIR and an empty HOME.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cacheDir } from "../../src/engines/pyodide/boot-image.ts";
import { installedLibrary } from "../../src/library/library.ts";
import { runNode } from "../helpers/process.ts";

const INDEX = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const PROGRAM = `
import { createSandbox } from ${JSON.stringify(INDEX)};
const events = [];
const sandbox = await createSandbox({ python: { pool: 1 }, onEvent: (e) => events.push(e) });
const r = await sandbox.run({ language: "python", code: "import sys\\nprint(1 + 1, any(p.endswith('wasmcell-packages') for p in sys.path))", limits: { timeoutMs: 60000 } });
await sandbox.close();
console.log(JSON.stringify({ ok: r.ok, stdout: r.stdout, events }));
`;

describe("first run", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), "wasmcell-first-"));
    dirs.push(d);
    return d;
  };
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test("without setup: an engine.building event with an estimate, and the run is served at once", async () => {
    const home = fresh();
    const env = { PATH: process.env.PATH, HOME: home, WASMCELL_CACHE_DIR: join(home, "cache") };
    const ran = await runNode(["--input-type=module", "-e", PROGRAM], { env });
    assert.equal(ran.code, 0, ran.stderr);
    const out = JSON.parse(ran.stdout.trim().split("\n").pop()!);
    assert.equal(out.ok, true);
    assert.equal(out.stdout, "2 False\n", "standard library only without setup");
    const types = out.events.map((e: { type: string }) => e.type);
    assert.ok(types.includes("packages.missing"), types.join());
    const building = out.events.find((e: { type: string }) => e.type === "engine.building");
    assert.ok(
      building && building.estimateMs > 1000 && /about \d+ s/.test(building.message),
      JSON.stringify(out.events),
    );
    assert.ok(!types.includes("engine.built"), "the run did not wait for the build");
  });

  test("without setup, the CLI says so on stderr", async () => {
    const home = fresh();
    const env = { PATH: process.env.PATH, HOME: home, WASMCELL_CACHE_DIR: join(home, "cache") };
    const ran = await runNode([MAIN, "run", "--lang", "python", "--timeout-ms", "60000", "-e", "print(6 * 7)"], {
      env,
    });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "42\n");
    assert.match(ran.stderr, /snapshot is not built on this machine.*wasmcell setup/s);
    assert.match(ran.stderr, /package library is not installed/);
  });

  test("with setup: a fresh process with an empty HOME and the set-up cache starts warm, with the library", async () => {
    assert.ok(installedLibrary(), "run `wasmcell setup` first (.ci/run does)");
    const env = { PATH: process.env.PATH, HOME: fresh(), WASMCELL_CACHE_DIR: cacheDir() };
    const ran = await runNode(["--input-type=module", "-e", PROGRAM], { env });
    assert.equal(ran.code, 0, ran.stderr);
    const out = JSON.parse(ran.stdout.trim().split("\n").pop()!);
    assert.equal(out.stdout, "2 True\n");
    assert.deepEqual(out.events, [], "no build, nothing missing");
  });
});
