// `wasmcell run --session FILE`: a Python session kept in a 0600 file across invocations (each its
// own process), under WASMCELL_SESSION_KEY; without the key it is a usage error, under another key a
// refusal that names it.
import assert from "node:assert/strict";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runNode } from "../helpers/process.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const KEY = "k".repeat(40);
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const cli = (args: string[], key: string | undefined) =>
  runNode([MAIN, "run", "--lang", "py", ...args], { env: { ...process.env, WASMCELL_SESSION_KEY: key ?? "" } });

describe("wasmcell run --session", () => {
  it("keeps values, imports and files from one invocation to the next, in a 0600 file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wasmcell-cli-session-"));
    dirs.push(dir);
    const file = join(dir, "s.snap");
    const first = await cli(["--session", file, "-e", "import json\nx = 41\nopen('/tmp/k', 'w').write('kept')"], KEY);
    assert.equal(first.code, 0, first.stderr);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const second = await cli(["--json", "--session", file, "-e", "(x + 1, open('/tmp/k').read(), json.dumps(1))"], KEY);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(JSON.parse(second.stdout).value, [42, "kept", "1"]);
    const noKey = await cli(["--session", file, "-e", "x"], undefined);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /WASMCELL_SESSION_KEY/);
    const otherKey = await cli(["--session", file, "-e", "x"], "z".repeat(40));
    assert.equal(otherKey.code, 3);
    assert.match(otherKey.stderr, /refused \(key\)/);
  });

  it("a random sequence the guest seeded carries on from one invocation to the next", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wasmcell-cli-session-"));
    dirs.push(dir);
    const file = join(dir, "r.snap");
    const first = await cli(["--session", file, "-e", "import random\nrandom.seed(5)\nrr = [random.random()]"], KEY);
    assert.equal(first.code, 0, first.stderr);
    const check = "rr.append(random.random())\nrandom.seed(5)\nrr == [random.random(), random.random()]";
    const second = await cli(["--json", "--session", file, "-e", check], KEY);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).value, true);
  });
});
