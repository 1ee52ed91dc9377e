// The native tier keeps `python.pool` jails pre-started (as many as may run at once) and refills them
// in the background after runs take them; each spare serves one run and has run nothing before it.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createEngine, type NativeEngine } from "../../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest } from "../../../src/options/index.ts";

const options = resolveOptions({ python: { engine: "native", pool: 3 }, seal: { seccomp: "kill" } });
const request = (code: string) => resolveRequest({ language: "python", engine: "native", code }, options);

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("native engine: pre-started jails", () => {
  let engine: NativeEngine | undefined;
  after(async () => engine?.close());

  it("starts python.pool spares, and refills them after a burst takes them all", async () => {
    engine = (await createEngine(options)) as NativeEngine;
    await until("3 spares", () => engine!.spares === 3);
    // Three at once: each takes a spare (none waits for a cold start), and each sees a fresh process.
    const results = await Promise.all(
      [0, 1, 2].map((i) => engine!.run(request(`import os\nprint(${i}, 'x' in globals(), os.getpid() > 0)\nx = 1`))),
    );
    assert.deepEqual(
      results.map((r) => r.stdout),
      ["0 False True\n", "1 False True\n", "2 False True\n"],
    );
    await until("the spares refilled to 3", () => engine!.spares === 3);
    assert.equal(engine.spares, 3, "never more than python.pool spares");
  });
});
