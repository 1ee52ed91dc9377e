// The checkpoint's proof of Pyodide's Module (sidecar/module-lock.ts), on a plain object standing in
// for it: once locked nothing can add a property (the proof no longer lists the keys), and every
// change that is still possible — a replaced value, a deleted property, a memory view of another
// buffer — is found and named. An object that is not locked is never proven equal.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lockedModuleDifference, lockModule } from "../../../../src/engines/pyodide/sidecar/module-lock.ts";

function fakeModule() {
  const buffer = new ArrayBuffer(16);
  const m: Record<string, unknown> = { a: 1, f: () => 2, HEAPU8: new Uint8Array(buffer) };
  lockModule(m);
  const keys = Reflect.ownKeys(m);
  const values = keys.map((k) => m[k as string]);
  const views = new Set([keys.indexOf("HEAPU8")]);
  const diff = (b: ArrayBufferLike = buffer) => lockedModuleDifference(m, keys, values, views, b);
  return { m, buffer, diff };
}

describe("pyodide checkpoint: Module locked against new properties", () => {
  it("proves an untouched Module equal, and makes Pyodide's lazy properties before the record", () => {
    const { m, diff } = fakeModule();
    assert.equal(diff(), undefined);
    assert.ok(m._asciiTextDecoder instanceof TextDecoder);
    assert.ok(Object.hasOwn(m, "stackStop") && Object.hasOwn(m, "syncify_error"));
  });

  it("refuses a new property where it is added (strict code throws)", () => {
    const { m, diff } = fakeModule();
    assert.throws(() => {
      m.leak = 1;
    }, TypeError);
    assert.throws(() => Object.defineProperty(m, "leak", { value: 1 }), TypeError);
    assert.equal(diff(), undefined);
  });

  it("finds a replaced value and a deleted property", () => {
    const replaced = fakeModule();
    replaced.m.f = () => 3;
    assert.match(replaced.diff() ?? "", /Module\.f/);
    const deleted = fakeModule();
    delete deleted.m.a;
    assert.match(deleted.diff() ?? "", /Module\.a was deleted/);
    // Put back with the same value, it cannot come back: still a difference.
    assert.throws(() => {
      deleted.m.a = 1;
    }, TypeError);
    assert.match(deleted.diff() ?? "", /deleted/);
  });

  it("proves the memory views against the current memory, not by identity", () => {
    const { m, diff } = fakeModule();
    const grown = new ArrayBuffer(32);
    m.HEAPU8 = new Uint8Array(grown);
    assert.equal(diff(grown), undefined);
    assert.match(diff() ?? "", /HEAPU8/);
  });

  it("never proves an object that can still take new properties", () => {
    const m: Record<string, unknown> = { a: 1 };
    assert.match(lockedModuleDifference(m, ["a"], [1], new Set(), new ArrayBuffer(0)) ?? "", /not locked/);
  });
});
