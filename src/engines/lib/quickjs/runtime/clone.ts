// structuredClone, in guest JS: it walks the guest's own values and builds new ones in the same realm,
// so nothing ever crosses to the host. The types are the structured-clone types QuickJS has:
// primitives, wrappers, Date, RegExp, Map, Set, ArrayBuffer, typed arrays, DataView, Error types,
// arrays, plain objects (own enumerable string keys; accessors are read), and Blob and File (blob.ts).
// Functions, symbols, WeakMap/WeakSet, Promise, other platform objects (Response, …) and views out of
// their buffer's bounds throw DataCloneError, as in Node. Cycles and shared references are kept.
// `transfer` takes ArrayBuffers only (there are no ports or other transferable platform objects
// here): each is copied like the rest, then detached, as a transfer leaves it; a detached,
// duplicated or non-ArrayBuffer entry is a DataCloneError before anything is cloned. A resizable
// ArrayBuffer stays resizable.

import type { FamilySource } from "./family.ts";

export const clone: FamilySource = {
  source: String.raw`(function (host, internals, global) {
"use strict";
var DOMException = internals.DOMException;
var gopd = Object.getOwnPropertyDescriptor, getProto = Object.getPrototypeOf;
var mapSize = gopd(Map.prototype, "size").get, setSize = gopd(Set.prototype, "size").get;
var dateTime = Date.prototype.getTime, abLen = gopd(ArrayBuffer.prototype, "byteLength").get, abSlice = ArrayBuffer.prototype.slice;
var abDetached = gopd(ArrayBuffer.prototype, "detached").get, abResizable = gopd(ArrayBuffer.prototype, "resizable").get;
var abMax = gopd(ArrayBuffer.prototype, "maxByteLength").get, abTransfer = ArrayBuffer.prototype.transfer;
var taProto = getProto(Uint8Array.prototype), taTag = gopd(taProto, Symbol.toStringTag).get;
var dvBuffer = gopd(DataView.prototype, "buffer").get, dvLength = gopd(DataView.prototype, "byteLength").get;
var taAt = taProto.at, taCheck = function () { return taAt.call(this, 0); };
var toString = Object.prototype.toString;
var ERRORS = { Error: Error, EvalError: EvalError, RangeError: RangeError, ReferenceError: ReferenceError, SyntaxError: SyntaxError, TypeError: TypeError, URIError: URIError };

function is(fn, v) { try { fn.call(v); return true; } catch (e) { return false; } }
function fail(v) {
  var what = typeof v === "function" ? (v.name ? "function " + v.name : "function") : typeof v === "symbol" ? v.toString() : toString.call(v);
  throw new DOMException(what + " could not be cloned.", "DataCloneError");
}

function outOfBounds() { throw new DOMException("A view outside its buffer's bounds could not be cloned.", "DataCloneError"); }

function copyBuffer(b) {
  if (abDetached.call(b)) throw new DOMException("An ArrayBuffer is detached and could not be cloned.", "DataCloneError");
  if (!abResizable.call(b)) return abSlice.call(b, 0);
  var out = new ArrayBuffer(abLen.call(b), { maxByteLength: abMax.call(b) });
  new Uint8Array(out).set(new Uint8Array(b));
  return out;
}

/** The ArrayBuffers options.transfer names, checked before anything is cloned. */
function transferList(options) {
  var t = options === undefined ? undefined : options.transfer;
  if (t === undefined) return [];
  if (t === null || typeof t !== "object" || typeof t[Symbol.iterator] !== "function")
    throw new TypeError("The \"options.transfer\" property must be an iterable of objects");
  var list = [];
  for (var x of t) {
    if (!is(abLen, x)) throw new DOMException("Value not transferable", "DataCloneError");
    if (list.indexOf(x) >= 0) throw new DOMException("An ArrayBuffer is listed twice in the transfer list", "DataCloneError");
    if (abDetached.call(x)) throw new DOMException("An ArrayBuffer is detached and could not be transferred.", "DataCloneError");
    list.push(x);
  }
  return list;
}

function cloneValue(v, seen) {
  var t = typeof v;
  if (v === null || (t !== "object" && t !== "function" && t !== "symbol")) return v;
  if (t !== "object") fail(v);
  if (seen.has(v)) return seen.get(v);
  var out;
  if (Array.isArray(v)) {
    out = new Array(v.length); seen.set(v, out);
    for (var k of Object.keys(v)) out[k] = cloneValue(v[k], seen);
    return out;
  }
  if (is(dateTime, v)) { out = new Date(dateTime.call(v)); seen.set(v, out); return out; }
  if (v instanceof RegExp) { out = new RegExp(v.source, v.flags); seen.set(v, out); return out; }
  if (is(mapSize, v)) { out = new Map(); seen.set(v, out); Map.prototype.forEach.call(v, function (val, key) { out.set(cloneValue(key, seen), cloneValue(val, seen)); }); return out; }
  if (is(setSize, v)) { out = new Set(); seen.set(v, out); Set.prototype.forEach.call(v, function (val) { out.add(cloneValue(val, seen)); }); return out; }
  if (is(abLen, v)) { out = copyBuffer(v); seen.set(v, out); return out; }
  var tag = ArrayBuffer.isView(v) ? taTag.call(v) : undefined;
  if (tag) {
    // A view out of its (resized or detached) buffer's bounds cannot be serialized; at() checks that.
    if (!is(taCheck, v)) outOfBounds();
    var buf = cloneValue(v.buffer, seen); out = new global[tag](buf, v.byteOffset, v.length); seen.set(v, out); return out;
  }
  if (ArrayBuffer.isView(v)) {
    if (!is(dvLength, v)) outOfBounds();
    out = new DataView(cloneValue(dvBuffer.call(v), seen), v.byteOffset, v.byteLength); seen.set(v, out); return out;
  }
  // Blob and File (read at call time: the blob family may be installed after this one).
  var blob = internals.cloneBlob ? internals.cloneBlob(v) : undefined;
  if (blob) { seen.set(v, blob); return blob; }
  var cls = toString.call(v);
  if (cls === "[object Error]") {
    var name = v.name, Ctor = Object.prototype.hasOwnProperty.call(ERRORS, name) ? ERRORS[name] : Error;
    out = Object.create(Ctor.prototype); seen.set(v, out);
    var msg = gopd(v, "message");
    if (msg) Object.defineProperty(out, "message", { value: String(v.message), writable: true, configurable: true });
    if (typeof v.stack === "string") Object.defineProperty(out, "stack", { value: v.stack, writable: true, configurable: true });
    if ("cause" in v) Object.defineProperty(out, "cause", { value: cloneValue(v.cause, seen), writable: true, configurable: true });
    return out;
  }
  if (cls === "[object Boolean]") { out = Object(Boolean.prototype.valueOf.call(v)); seen.set(v, out); return out; }
  if (cls === "[object Number]") { out = Object(Number.prototype.valueOf.call(v)); seen.set(v, out); return out; }
  if (cls === "[object String]") { out = Object(String.prototype.valueOf.call(v)); seen.set(v, out); return out; }
  if (cls === "[object BigInt]") { out = Object(BigInt.prototype.valueOf.call(v)); seen.set(v, out); return out; }
  var proto = getProto(v);
  if (cls !== "[object Object]" || v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef ||
      (proto !== null && proto !== Object.prototype && typeof proto.constructor === "function" && gopd(proto, Symbol.toStringTag))) fail(v);
  out = {}; seen.set(v, out);
  for (var key of Object.keys(v)) out[key] = cloneValue(v[key], seen);
  return out;
}

function structuredClone(value, options) {
  if (arguments.length === 0) throw new TypeError("The \"value\" argument must be specified");
  if (options !== undefined && (options === null || typeof options !== "object")) throw new TypeError("The \"options\" argument must be of type object.");
  var moved = transferList(options);
  var out = cloneValue(value, new Map());
  for (var b of moved) abTransfer.call(b);
  return out;
}
Object.defineProperty(global, "structuredClone", { value: structuredClone, writable: true, configurable: true, enumerable: true });
})`,
};
