// Sessions whose state cannot be taken say so with a typed error, never a half-made snapshot.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../src/core/errors.ts";
import { createSandbox } from "../../../src/index.ts";
import { createSandbox as createEdgeSandbox } from "../../../src/edge.ts";

describe("sessions that cannot be snapshotted", () => {
  it("a JavaScript session of the edge build: snapshot() and fork() throw SnapshotUnsupportedError (reason engine)", async () => {
    await using sb = await createEdgeSandbox();
    await using s = await sb.session({ language: "javascript" });
    await s.run({ code: "globalThis.x = 1" });
    for (const op of [() => s.snapshot(), () => s.fork()]) {
      await assert.rejects(op(), (e: unknown) => {
        assert.ok(e instanceof SnapshotUnsupportedError);
        assert.equal(e.code, "SNAPSHOT_UNSUPPORTED");
        assert.equal(e.reason, "engine");
        return true;
      });
    }
  });

  it("a native Python session is a live process: snapshot and fork refuse it (reason native)", async () => {
    await using sb = await createSandbox({ python: { pool: 1, prewarm: false } });
    const session = await sb.session({ language: "python", engine: "native" });
    const native = (e: unknown) => e instanceof SnapshotUnsupportedError && e.reason === "native";
    await assert.rejects(session.snapshot(), native);
    await assert.rejects(session.fork(), native);
    await session.close();
  });

  it("resume refuses what is not a snapshot before any engine starts", async () => {
    await using sb = await createSandbox();
    await assert.rejects(sb.resume(new Uint8Array(10)), (e: unknown) => {
      assert.ok(e instanceof SnapshotRejectedError);
      return e.reason === "corrupt";
    });
  });
});
