// structuredClone and performance against Node's (WPT html/webappapis/structured-clone, hr-time).
import { describe } from "node:test";
import { parity } from "./parity.ts";

describe("structuredClone and performance behave like Node's", () => {
  parity([
    [
      "primitives",
      `[structuredClone(1), structuredClone("s"), structuredClone(null), structuredClone(undefined), structuredClone(10n), structuredClone(-0), structuredClone(NaN)]`,
    ],
    [
      "objects are deep copies",
      `(() => { const a = { x: { y: [1, 2, { z: 3 }] } }; const b = structuredClone(a); b.x.y[2].z = 9; return [a.x.y[2].z, b.x.y[2].z, a !== b]; })()`,
    ],
    [
      "Date, RegExp, Map, Set",
      `(() => { const c = structuredClone({ d: new Date(5), r: /a+/gi, m: new Map([[1, { k: 1 }]]), s: new Set([1, "a"]) }); return [c.d instanceof Date, c.d.getTime(), c.r.source, c.r.flags, c.m.get(1), [...c.s]]; })()`,
    ],
    [
      "typed arrays, ArrayBuffer and DataView",
      `(() => { const buf = new Uint8Array([1, 2, 3, 4]).buffer; const c = structuredClone({ b: buf, v: new Uint16Array(buf, 2, 1), dv: new DataView(buf, 1, 2) }); return [c.b, c.v, c.v.buffer === c.b, c.dv.byteLength, c.dv.getUint8(0)]; })()`,
    ],
    [
      "transfer detaches the listed ArrayBuffers and keeps their bytes in the copy",
      `(() => { const u = new Uint8Array([1, 2, 3]); const c = structuredClone({ u }, { transfer: [u.buffer] }); return [u.buffer.detached, u.length, c.u, c.u.buffer.detached]; })()`,
    ],
    [
      "a detached, duplicated or non-transferable transfer entry is a DataCloneError",
      `(() => { const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } }; const b = new ArrayBuffer(2); structuredClone(b, { transfer: [b] }); const d = new ArrayBuffer(1); return [name(() => structuredClone(b, { transfer: [b] })), name(() => structuredClone(d, { transfer: [d, d] })), name(() => structuredClone(1, { transfer: [{}] })), d.detached]; })()`,
    ],
    [
      "a resizable ArrayBuffer stays resizable",
      `(() => { const c = structuredClone(new ArrayBuffer(4, { maxByteLength: 16 })); return [c.resizable, c.byteLength, c.maxByteLength]; })()`,
    ],
    [
      "cycles and shared references are kept",
      `(() => { const a = { n: 1 }; a.self = a; const shared = {}; const c = structuredClone({ a, p: shared, q: shared }); return [c.a.self === c.a, c.p === c.q, c.a !== a]; })()`,
    ],
    [
      "errors",
      `(() => { const e = structuredClone(new RangeError("bad")); return [e instanceof RangeError, e.name, e.message]; })()`,
    ],
    [
      "wrappers",
      `[structuredClone(Object(1)) instanceof Number, structuredClone(Object("s")).valueOf(), structuredClone(Object(false)).valueOf()]`,
    ],
    [
      "class instances become plain objects",
      `(() => { class P { constructor() { this.x = 1; } get y() { return 2; } } const c = structuredClone(new P()); return [c.x, c.y, Object.getPrototypeOf(c) === Object.prototype]; })()`,
    ],
    [
      "sparse arrays and extra keys",
      `(() => { const a = [1, , 3]; a.k = "v"; const c = structuredClone(a); return [c.length, 1 in c, c.k]; })()`,
    ],
    ["functions throw DataCloneError", `structuredClone({ f() {} })`],
    ["symbols throw DataCloneError", `structuredClone(Symbol("s"))`],
    ["WeakMap throws DataCloneError", `structuredClone(new WeakMap())`],
    ["Promise throws DataCloneError", `structuredClone(Promise.resolve())`],
    ["no argument is a TypeError", `structuredClone()`],
    [
      "a view out of its resized buffer's bounds is a DataCloneError",
      `(() => { const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } }; const ab = new ArrayBuffer(16, { maxByteLength: 64 }); const ta = new Uint8Array(ab, 8), dv = new DataView(ab, 8), whole = new Uint8Array(ab); ab.resize(4); return [name(() => structuredClone(ta)), name(() => structuredClone(dv)), structuredClone(whole).length]; })()`,
    ],
    [
      "performance.now is a non-decreasing number",
      `(() => { const a = performance.now(), b = performance.now(); return [typeof a, b >= a, a >= 0, typeof performance.timeOrigin, Math.abs(performance.timeOrigin + a - Date.now()) < 1000]; })()`,
    ],
  ]);
});
