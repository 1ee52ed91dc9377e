// Threat: returned values that run code in the host — getters, toJSON, proxies, valueOf/toString. The
// value is serialised inside the guest and rebuilt by the host as plain data: whatever guest code
// runs, runs in the guest under its deadline, and the host receives no guest object.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { timeoutMs: 500 } });
  });
  after(() => sandbox.close());
  const js = (code: string) => sandbox.run({ language: "javascript", code });

  it("a getter's value is copied; the host object has no getter", async () => {
    const r = await js(`({ get x() { return 41 + 1 } })`);
    assert.equal(r.ok, true);
    const value = r.ok ? (r.value as object) : {};
    const desc = Object.getOwnPropertyDescriptor(value, "x");
    assert.deepEqual(desc, { value: 42, writable: true, enumerable: true, configurable: true });
  });

  it("a getter that never returns is stopped by the deadline inside the guest", async () => {
    const r = await js(`({ get x() { while (true) {} } })`);
    assert.equal(!r.ok && r.error.kind, "timeout");
  });

  it("a throwing getter or toJSON fails the run as runtime, naming serialisation", async () => {
    for (const code of [`({ get x() { throw new Error("trap") } })`, `({ toJSON() { throw new Error("trap") } })`]) {
      const r = await js(code);
      assert.equal(!r.ok && r.error.kind, "runtime");
      assert.match(!r.ok ? r.error.message : "", /while serialising the result: trap/);
    }
  });

  it("a Proxy's traps run in the guest; the host gets plain data", async () => {
    const r = await js(
      `new Proxy({}, { ownKeys: () => ["a"], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: () => "trapped" })`,
    );
    assert.equal(r.ok, true);
    assert.equal(r.ok && Object.getPrototypeOf(r.value), Object.prototype);
    assert.deepEqual(r.ok && r.value, { a: "trapped" });
  });

  it("valueOf/toString/Symbol.toPrimitive are never called by the host", async () => {
    const r = await js(
      `globalThis.calls = 0; const o = { valueOf() { calls++; return 1 }, toString() { calls++; return "x" }, [Symbol.toPrimitive]() { calls++; return 2 } }; o`,
    );
    assert.equal(r.ok, true);
    const v = r.ok ? (r.value as Record<string, unknown>) : {};
    assert.deepEqual(Object.keys(v), ["valueOf", "toString"]);
    assert.equal(
      Object.getOwnPropertyDescriptor(v, "valueOf")?.value,
      "[Function: valueOf]",
      "functions come back as descriptive strings, never callable",
    );
  });

  it("a spoofed Symbol.toStringTag does not fool the serialiser", async () => {
    const r = await js(`({ [Symbol.toStringTag]: "Map", a: 1 })`);
    assert.deepEqual(r.ok && r.value, { a: 1 });
  });

  it("tampering with the user realm's intrinsics does not change the serialiser", async () => {
    const r = await js(
      `JSON.stringify = () => "pwned"; Object.keys = () => []; Array.prototype.push = null; Map.prototype.forEach = null; ({ a: [1, 2], m: new Map([[1, 2]]) })`,
    );
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, { a: [1, 2], m: new Map([[1, 2]]) });
  });

  it("special values and cycles come back as data", async () => {
    const r = await js(
      `const o = { u: undefined, n: NaN, i: -Infinity, z: -0, b: 2n ** 70n, d: new Date(0), s: new Set(["a"]), t: new Int16Array([-1, 2]), e: new RangeError("r") }; o.self = o; o`,
    );
    assert.equal(r.ok, true);
    const v = r.ok ? (r.value as Record<string, unknown>) : {};
    assert.ok("u" in v && v.u === undefined);
    assert.ok(Number.isNaN(v.n));
    assert.equal(v.i, -Infinity);
    assert.ok(Object.is(v.z, -0));
    assert.equal(v.b, 2n ** 70n);
    assert.deepEqual(v.d, new Date(0));
    assert.deepEqual(v.s, new Set(["a"]));
    assert.deepEqual(v.t, new Int16Array([-1, 2]));
    assert.ok(v.e instanceof Error && v.e.name === "RangeError" && v.e.message === "r");
    assert.equal(v.self, "[Circular]");
  });

  it("a key named __proto__ stays an own property and does not pollute prototypes", async () => {
    const r = await js(`JSON.parse('{"__proto__": {"polluted": true}}')`);
    assert.equal(r.ok, true);
    const v = r.ok ? (r.value as Record<string, unknown>) : {};
    assert.ok(Object.hasOwn(v, "__proto__"));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
  });

  it("a result over maxResultBytes is kind output_limit", async () => {
    const r = await sandbox.run({ language: "javascript", code: `"x".repeat(5000)`, limits: { maxResultBytes: 1000 } });
    assert.equal(!r.ok && r.error.kind, "output_limit");
    assert.match(!r.ok ? r.error.message : "", /maxResultBytes/);
    const o = await sandbox.run({
      language: "javascript",
      code: `Array.from({ length: 1000 }, (_, i) => ({ i }))`,
      limits: { maxResultBytes: 1000 },
    });
    assert.equal(!o.ok && o.error.kind, "output_limit");
  });
});
