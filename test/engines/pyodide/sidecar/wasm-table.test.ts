// The checkpoint's proof of the WASM function table (sidecar/wasm-table.ts), on a plain table: a
// replaced entry is found (and named) even when the length stays, a grown table is found, and an
// entry put back to the very function it held proves equal again. The guest's way to the table (the
// bridge's JsProxy, the stack-trace hook) is closed (test/security/pyodide-bridge-realm-escape.test.ts), so
// the tampering here is done from JavaScript, as a guest that reached the realm would.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordTable, tableDifference } from "../../../../src/engines/pyodide/sidecar/wasm-table.ts";

interface Table {
  readonly length: number;
  get(i: number): unknown;
  set(i: number, f: unknown): void;
  grow(n: number): number;
}
const wasm = (
  globalThis as unknown as {
    WebAssembly: { instantiate(b: Uint8Array): Promise<{ instance: { exports: { t: Table; a: () => number } } }> };
  }
).WebAssembly;

// (module (type (func (result i32))) (func $a (result i32) i32.const 1) (func $b (result i32) i32.const 2)
//  (table $t 2 funcref) (elem (i32.const 0) $a $b) (export "t" (table $t)) (export "a" (func $a)) (export "b" (func $b)))
// prettier-ignore
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
  0x03, 0x03, 0x02, 0x00, 0x00, // two functions of that type
  0x04, 0x04, 0x01, 0x70, 0x00, 0x02, // a funcref table of 2
  0x07, 0x0d, 0x03, 0x01, 0x74, 0x01, 0x00, 0x01, 0x61, 0x00, 0x00, 0x01, 0x62, 0x00, 0x01, // exports t, a, b
  0x09, 0x08, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x02, 0x00, 0x01, // table[0..1] = a, b
  0x0a, 0x0b, 0x02, 0x04, 0x00, 0x41, 0x01, 0x0b, 0x04, 0x00, 0x41, 0x02, 0x0b, // bodies: 1, 2
]);

async function table(): Promise<{ t: Table; a: () => number }> {
  const { instance } = await wasm.instantiate(MODULE);
  return instance.exports;
}

describe("pyodide checkpoint: the WASM function table, entry by entry", () => {
  it("an untouched table proves equal", async () => {
    const { t } = await table();
    const saved = recordTable(t);
    assert.equal(saved.length, 2);
    assert.equal(tableDifference(t, saved), undefined);
  });

  it("an entry replaced by another function of the table is found, though the length is the same", async () => {
    const { t, a } = await table();
    const saved = recordTable(t);
    t.set(0, t.get(1)); // `abs` becomes `len`
    assert.equal((t.get(0) as () => number)(), 2);
    assert.equal(t.length, saved.length);
    assert.equal(tableDifference(t, saved), "the run replaced entry 0 of the WASM function table");
    t.set(0, a); // the very function it held
    assert.equal(tableDifference(t, saved), undefined);
  });

  it("an emptied entry and a grown table are found", async () => {
    const { t } = await table();
    const saved = recordTable(t);
    t.set(1, null);
    assert.equal(tableDifference(t, saved), "the run replaced entry 1 of the WASM function table");
    t.set(1, saved[1]);
    t.grow(1);
    assert.match(tableDifference(t, saved) ?? "", /^the run grew the WASM function table \(dynamic code\): 2 → 3/);
  });
});
