// Threat: guest code reaching the host — its globals, modules, environment, filesystem or network.
// The QuickJS cell starts with nothing of the host: each probe must find nothing, or fail as `denied`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());

  const js = (code: string) => sandbox.run({ language: "javascript", code });

  it("has no process, require, module, Buffer, fetch, Deno, Bun or env", async () => {
    const r = await js(
      `["process","require","module","exports","Buffer","fetch","XMLHttpRequest","WebSocket","Deno","Bun","__dirname","std","os"].filter((n) => typeof globalThis[n] !== "undefined")`,
    );
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, []);
  });

  it("cannot climb from a host-installed function to the host realm", async () => {
    // console.log and setTimeout are created in the user's own context: their constructor chain ends in the user's Function.
    const r = await js(
      `const F = console.log.constructor; const g = F("return this")(); [g === globalThis, typeof g.process, setTimeout.constructor === Function]`,
    );
    assert.deepEqual(r.ok && r.value, [true, "undefined", true]);
  });

  it("refuses static imports of host modules as denied", async () => {
    for (const spec of ["fs", "node:child_process", "./secret.js"]) {
      const r = await js(`import x from ${JSON.stringify(spec)};\nexport default x`);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "denied", spec);
      assert.match(!r.ok ? r.error.message : "", /no module loader/);
    }
  });

  it("refuses dynamic import() as denied", async () => {
    const r = await js(`await import("node:fs")`);
    assert.equal(!r.ok && r.error.kind, "denied");
  });

  it("fs is the in-memory one: no host files, no absolute paths, no ..", async () => {
    const r = await js(`const out = [];
      for (const p of ["/etc/passwd", "../../etc/passwd", "package.json"]) { try { fs.readFileSync(p, "utf8"); out.push("read " + p); } catch (e) { out.push(e.message.split(":")[0]); } }
      out`);
    assert.deepEqual(r.ok && r.value, ["EACCES", "EACCES", "ENOENT"]);
  });

  it("one run cannot see another run's globals", async () => {
    await js(`globalThis.secret = "s3cret"; var leaked = 1`);
    const r = await js(`[typeof secret, typeof leaked]`);
    assert.deepEqual(r.ok && r.value, ["undefined", "undefined"]);
  });

  it("host functions are off by default", async () => {
    const s = await createSandbox({ javascript: { hostFunctions: { lookup: () => 1 } } });
    try {
      const r = await js(`typeof lookup`);
      assert.equal(r.ok && r.value, "undefined", "not granted to another sandbox");
      const granted = await s.run({ language: "javascript", code: `typeof lookup` });
      assert.equal(granted.ok && granted.value, "function");
    } finally {
      await s.close();
    }
  });
});
