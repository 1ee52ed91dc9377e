// Blob and File (the File API), in guest JS: a Blob is immutable bytes in the guest's own heap, so
// nothing crosses to the host, and every byte a guest builds is counted against the run's memory
// limit like any typed array (parts are copied into one buffer when the Blob is made: a Blob of
// Blobs cannot stand for more bytes than the heap holds, and the size is capped at MAX_BLOB_BYTES
// besides). A slice shares its parent's bytes (they never change). What is and is not here:
// the constructors, size/type/name/lastModified, slice(), text(), arrayBuffer() and bytes(), with the
// WebIDL conversions (sequence from @@iterator, BufferSource or Blob or USVString parts, dictionary
// members read in order, [Clamp] slice positions, type normalisation, `endings: "native"` as LF,
// the box's line ending). stream() is not: the box has no ReadableStream. Neither is FileReader.
// structuredClone reaches Blob and File through `internals.cloneBlob`, fetch's bodies and FormData
// through `internals.blobData`, `makeBlob` and `formFile` (the internals are closure-only).

import type { FamilySource } from "./family.ts";

/** The largest Blob a guest may build (bytes), below any memory limit a run can set. */
export const MAX_BLOB_BYTES = 2 ** 31 - 1;

export const blob: FamilySource = {
  source:
    String.raw`(function (host, internals, global) {
"use strict";
var encodeUtf8 = internals.encodeUtf8, TextDecoder = internals.TextDecoder;
var MAX = ${MAX_BLOB_BYTES};
var taProto = Object.getPrototypeOf(Uint8Array.prototype);
var gopd = Object.getOwnPropertyDescriptor;
var abLen = gopd(ArrayBuffer.prototype, "byteLength").get;
var viewBuffer = gopd(taProto, "buffer").get, viewOffset = gopd(taProto, "byteOffset").get, viewLength = gopd(taProto, "byteLength").get;
var dvBuffer = gopd(DataView.prototype, "buffer").get, dvOffset = gopd(DataView.prototype, "byteOffset").get, dvLength = gopd(DataView.prototype, "byteLength").get;
var u8Set = Uint8Array.prototype.set, u8Slice = Uint8Array.prototype.slice, u8Sub = Uint8Array.prototype.subarray;
var resolved = Promise.resolve.bind(Promise), rejected = Promise.reject.bind(Promise);
// The token only this closure holds: File hands its converted bytes to Blob's constructor with it.
var MADE = {};

function isObject(v) { return (typeof v === "object" && v !== null) || typeof v === "function"; }
function is(get, v) { try { get.call(v); return true; } catch (e) { return false; } }

// A BlobPart (WebIDL union BufferSource or Blob or USVString): bytes, a Blob, or a string.
function toPart(v) {
  if (isObject(v)) {
    if (isBlob(v)) return v;
    if (is(abLen, v)) return new Uint8Array(v);
    if (is(viewLength, v)) return new Uint8Array(viewBuffer.call(v), viewOffset.call(v), viewLength.call(v));
    if (is(dvLength, v)) return new Uint8Array(dvBuffer.call(v), dvOffset.call(v), dvLength.call(v));
  }
  return ` +
    "`${v}`" +
    String.raw`; // ToString: a Symbol throws TypeError; an object's toString before valueOf
}

// WebIDL sequence<BlobPart>: @@iterator read once, each value converted as soon as it is taken.
function toParts(v, what) {
  if (v === undefined) return [];
  if (!isObject(v)) throw new TypeError("Failed to construct '" + what + "': The provided value cannot be converted to a sequence.");
  var method = v[Symbol.iterator];
  if (typeof method !== "function") throw new TypeError("Failed to construct '" + what + "': The object must have a callable @@iterator property.");
  var it = method.call(v);
  if (!isObject(it)) throw new TypeError("Result of the Symbol.iterator method is not an object");
  var next = it.next, parts = [];
  for (;;) {
    var step = next.call(it);
    if (!isObject(step)) throw new TypeError("Iterator result is not an object");
    if (step.done) return parts;
    parts.push(toPart(step.value));
  }
}

function toBag(v, what) {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new TypeError("Failed to construct '" + what + "': The provided value is not of type '" + what + "PropertyBag'.");
  return v;
}

function toEndings(v) {
  if (v === undefined) return "transparent";
  var s = ` +
    "`${v}`" +
    String.raw`;
  if (s !== "transparent" && s !== "native") throw new TypeError("The provided value '" + s + "' is not a valid enum value of type EndingType.");
  return s;
}

// A type outside U+0020–U+007E is the empty string; otherwise it is ASCII-lowercased.
function normalType(v) {
  if (v === undefined) return "";
  var s = ` +
    "`${v}`" +
    String.raw`;
  return /[^\x20-\x7e]/.test(s) ? "" : s.toLowerCase();
}

// One buffer of all the parts' bytes, strings as UTF-8 (LF for every line break when native).
function join(parts, endings) {
  var chunks = [], total = 0;
  for (var i = 0; i < parts.length; i++) {
    var p = parts[i];
    var bytes = typeof p === "string" ? encodeUtf8(endings === "native" ? p.replace(/\r\n?/g, "\n") : p) : isBlob(p) ? viewOf(p) : p;
    total += bytes.length;
    if (total > MAX) throw new RangeError("A Blob may hold at most " + MAX + " bytes");
    chunks.push(bytes);
  }
  var out = new Uint8Array(total), at = 0;
  for (var j = 0; j < chunks.length; j++) { u8Set.call(out, chunks[j], at); at += chunks[j].length; }
  return out;
}

// WebIDL [Clamp] long long: NaN is 0, then the nearest integer, ties to even.
function clamp(v) {
  var x = +v;
  if (x !== x) return 0;
  if (x === Infinity || x === -Infinity) return x;
  var f = Math.floor(x), d = x - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}
function relative(v, size, fallback) {
  if (v === undefined) return fallback;
  var x = clamp(v);
  return x < 0 ? Math.max(size + x, 0) : Math.min(x, size);
}

// WebIDL long long (lastModified): NaN and infinities are 0, then truncated, modulo 2^64.
function toLongLong(v) {
  var x = +v;
  if (x !== x || x === Infinity || x === -Infinity) return 0;
  x = Math.trunc(x);
  if (x >= -9223372036854775808 && x < 9223372036854775808) return x + 0;
  var m = x % 18446744073709551616;
  if (m < 0) m += 18446744073709551616;
  return m >= 9223372036854775808 ? m - 18446744073709551616 : m + 0;
}

function brandError(what, name) { return new TypeError("Failed to execute '" + name + "' on '" + what + "': Illegal invocation"); }

// Brand checks and field reads for code outside the classes (set by their static blocks).
var isBlob, isFile, viewOf, typeOf, nameOf, modifiedOf;

class Blob {
  #bytes; #type;
  static { isBlob = function (v) { return isObject(v) && #bytes in v; }; viewOf = function (b) { return b.#bytes; }; typeOf = function (b) { return b.#type; }; }
  constructor(blobParts, options) {
    if (blobParts === MADE) { this.#bytes = options.bytes; this.#type = options.type; return; }
    var parts = toParts(blobParts, "Blob");
    var bag = toBag(options, "Blob");
    var endings = toEndings(bag.endings);
    this.#type = normalType(bag.type);
    this.#bytes = join(parts, endings);
  }
  get size() { return this.#bytes.length; }
  get type() { return this.#type; }
  slice(start, end, contentType) {
    var bytes = this.#bytes, size = bytes.length;
    var from = relative(start, size, 0), to = relative(end, size, size);
    var span = Math.max(to - from, 0);
    return new Blob(MADE, { bytes: u8Sub.call(bytes, from, from + span), type: normalType(contentType) });
  }
  // Promise-returning operations reject (not throw) on a wrong receiver, as WebIDL says.
  text() {
    if (!isBlob(this)) return rejected(brandError("Blob", "text"));
    var bytes = this.#bytes;
    return resolved(undefined).then(function () { return new TextDecoder().decode(bytes); });
  }
  arrayBuffer() {
    if (!isBlob(this)) return rejected(brandError("Blob", "arrayBuffer"));
    var bytes = this.#bytes;
    return resolved(undefined).then(function () { return u8Slice.call(bytes).buffer; });
  }
  bytes() {
    if (!isBlob(this)) return rejected(brandError("Blob", "bytes"));
    var bytes = this.#bytes;
    return resolved(undefined).then(function () { return u8Slice.call(bytes); });
  }
}
Object.defineProperty(Blob, "length", { value: 0 });

class File extends Blob {
  #name; #lastModified;
  static { isFile = function (v) { return isObject(v) && #name in v; }; nameOf = function (f) { return f.#name; }; modifiedOf = function (f) { return f.#lastModified; }; }
  constructor(fileBits, fileName, options) {
    if (fileBits === MADE) {
      super(MADE, fileName);
      this.#name = fileName.name; this.#lastModified = fileName.lastModified;
      return;
    }
    if (arguments.length < 2) throw new TypeError("Failed to construct 'File': 2 arguments required, but only " + arguments.length + " present.");
    var parts = toParts(fileBits, "File");
    var name = ` +
    "`${fileName}`" +
    String.raw`.toWellFormed();
    var bag = toBag(options, "File");
    var endings = toEndings(bag.endings);
    var modified = bag.lastModified;
    var lastModified = modified === undefined ? Date.now() : toLongLong(modified);
    var type = normalType(bag.type);
    super(MADE, { bytes: join(parts, endings), type: type });
    this.#name = name;
    this.#lastModified = lastModified;
  }
  get name() { return this.#name; }
  get lastModified() { return this.#lastModified; }
}
Object.defineProperty(File, "length", { value: 2 });

// WebIDL: attributes and operations are enumerable; the class string is the interface's name.
[Blob, File].forEach(function (C) {
  var proto = C.prototype;
  Object.getOwnPropertyNames(proto).forEach(function (k) {
    if (k === "constructor") return;
    var d = gopd(proto, k); d.enumerable = true; Object.defineProperty(proto, k, d);
  });
  Object.defineProperty(proto, Symbol.toStringTag, { value: C.name, configurable: true });
  Object.defineProperty(global, C.name, { value: C, writable: true, configurable: true });
});

// For fetch's bodies: a Blob's bytes (a copy: the body may be read into a buffer the guest owns),
// type and, for a File, name; and a Blob made from bytes a body read (blob()).
internals.blobData = function (v) {
  if (!isBlob(v)) return undefined;
  return { bytes: u8Slice.call(viewOf(v)), type: typeOf(v), name: isFile(v) ? nameOf(v) : undefined };
};
internals.makeBlob = function (bytes, type) { return new Blob(MADE, { bytes: bytes, type: normalType(type) }); };
// FormData's entry for a Blob value: a File, named filename, the File's own name, or "blob".
internals.formFile = function (v, filename) {
  if (!isBlob(v)) return undefined;
  if (isFile(v) && filename === undefined) return v;
  var name = filename !== undefined ? ` +
    "`${filename}`" +
    String.raw`.toWellFormed() : isFile(v) ? nameOf(v) : "blob";
  return new File(MADE, { bytes: viewOf(v), type: typeOf(v), name: name, lastModified: isFile(v) ? modifiedOf(v) : Date.now() });
};

// console.log's view of a Blob or File (the service realm's formatter calls this): [size, type] or
// [size, type, name, lastModified], read through the brand; undefined for anything else.
internals.describeBlob = function (v) {
  if (!isBlob(v)) return undefined;
  var d = [viewOf(v).length, typeOf(v)];
  if (isFile(v)) d.push(nameOf(v), modifiedOf(v));
  return d;
};

// structuredClone of a Blob or File: the same bytes (immutable, so shared) and attributes read
// through the brand, never through the guest's (possibly replaced) getters; undefined otherwise.
internals.cloneBlob = function (v) {
  if (!isBlob(v)) return undefined;
  var data = { bytes: viewOf(v), type: typeOf(v) };
  if (!isFile(v)) return new Blob(MADE, data);
  data.name = nameOf(v); data.lastModified = modifiedOf(v);
  return new File(MADE, data);
};
})`,
};
