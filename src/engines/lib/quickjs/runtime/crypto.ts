// `crypto`: getRandomValues and randomUUID from the host's CSPRNG (QuickJS has none, and a guest-side
// generator would need a seed the guest could predict), and `crypto.subtle` digest (SHA-1/256/384/512)
// and HMAC (importKey raw / generateKey / sign / verify / exportKey raw), computed by the host on bytes
// the guest copies out. Key bytes live in a private field of the guest's CryptoKey.

import type { HashName } from "./platform.ts";
import type { FamilySource } from "./family.ts";

export const crypto: FamilySource = {
  bindings: {
    random: { params: ["number"], fn: (p, n: number) => p.randomBytes(n) },
    digest: { params: ["string", "bytes"], fn: (p, alg: HashName, data: Uint8Array) => p.digest(alg, data) },
    hmac: {
      params: ["string", "bytes", "bytes"],
      fn: (p, alg: HashName, key: Uint8Array, data: Uint8Array) => p.hmac(alg, key, data),
    },
  },
  source: String.raw`(function (host, internals, global) {
"use strict";
var DOMException = internals.DOMException, random = host.random, hostDigest = host.digest, hostHmac = host.hmac;
var HASHES = { "SHA-1": 64, "SHA-256": 64, "SHA-384": 128, "SHA-512": 128 };

function isIntegerArray(v) {
  return ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof Float32Array) && !(v instanceof Float64Array) &&
    !(typeof Float16Array !== "undefined" && v instanceof Float16Array);
}
function getRandomValues(array) {
  if (arguments.length === 0) throw new TypeError('The "array" argument must be specified');
  if (!isIntegerArray(array)) throw new DOMException("The data argument must be an integer-type TypedArray", "TypeMismatchError");
  if (array.byteLength > 65536) throw new DOMException("The ArrayBufferView's byte length (" + array.byteLength + ") exceeds the number of bytes of entropy available via this API (65536)", "QuotaExceededError");
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(new Uint8Array(random(array.byteLength)));
  return array;
}
var HEX = [];
for (var h = 0; h < 256; h++) HEX.push((h < 16 ? "0" : "") + h.toString(16));
function randomUUID() {
  var b = new Uint8Array(random(16));
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  var s = "";
  for (var i = 0; i < 16; i++) { s += HEX[b[i]]; if (i === 3 || i === 5 || i === 7 || i === 9) s += "-"; }
  return s;
}

/** A fresh ArrayBuffer holding a copy of a BufferSource (the only thing the host accepts). */
// A detached buffer holds no bytes (WebIDL "get a copy of the bytes held by the buffer source").
function copyOf(data, what) {
  if (data instanceof ArrayBuffer) return data.detached ? new ArrayBuffer(0) : data.slice(0);
  if (ArrayBuffer.isView(data) && data.buffer.detached) return new ArrayBuffer(0);
  if (ArrayBuffer.isView(data)) return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  throw new TypeError("Failed to execute '" + what + "' on 'SubtleCrypto': parameter is not of type 'BufferSource'.");
}
function algName(alg) {
  var name = typeof alg === "string" ? alg : alg !== null && typeof alg === "object" ? alg.name : undefined;
  if (typeof name !== "string") throw new TypeError("Algorithm: name is required");
  return name;
}
function hashName(alg) {
  var upper = algName(alg).toUpperCase();
  if (!Object.prototype.hasOwnProperty.call(HASHES, upper)) throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
  return upper;
}
function hmacParams(alg) {
  if (algName(alg).toUpperCase() !== "HMAC") throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
  if (alg.hash === undefined) throw new TypeError("Algorithm: hash is required");
  return hashName(alg.hash);
}

var keyToken = {}, keyBytes;
class CryptoKey {
  #bytes; #algorithm; #extractable; #usages;
  constructor(token, bytes, hash, extractable, usages) {
    if (token !== keyToken) throw new TypeError("Illegal constructor");
    this.#bytes = bytes; this.#algorithm = { name: "HMAC", length: bytes.byteLength * 8, hash: { name: hash } };
    this.#extractable = !!extractable; this.#usages = usages;
  }
  static { keyBytes = function (k) { return k.#bytes; }; }
  get type() { return "secret"; }
  get extractable() { return this.#extractable; }
  get algorithm() { return { name: "HMAC", length: this.#algorithm.length, hash: { name: this.#algorithm.hash.name } }; }
  get usages() { return this.#usages.slice(); }
}
function usagesOf(usages) {
  var list = Array.from(usages || [], String);
  for (var u of list) if (u !== "sign" && u !== "verify") throw new DOMException("Unsupported key usage for an HMAC key", "SyntaxError");
  return list;
}
function checkKey(key, usage) {
  if (!(key instanceof CryptoKey)) throw new TypeError("parameter 2 is not of type 'CryptoKey'");
  if (key.usages.indexOf(usage) < 0) throw new DOMException("key.usages does not permit this operation", "InvalidAccessError");
}

class SubtleCrypto {
  constructor(token) { if (token !== keyToken) throw new TypeError("Illegal constructor"); }
  async digest(algorithm, data) { var name = hashName(algorithm); return hostDigest(name, copyOf(data, "digest")); }
  async importKey(format, keyData, algorithm, extractable, usages) {
    if (format !== "raw") throw new DOMException("Unsupported key format: only \"raw\" HMAC keys are available", "NotSupportedError");
    var hash = hmacParams(algorithm), bytes = copyOf(keyData, "importKey");
    if (bytes.byteLength === 0) throw new DOMException("Zero-length key is not supported", "DataError");
    return new CryptoKey(keyToken, bytes, hash, extractable, usagesOf(usages));
  }
  async generateKey(algorithm, extractable, usages) {
    var hash = hmacParams(algorithm);
    var bits = algorithm.length === undefined ? HASHES[hash] * 8 : Number(algorithm.length);
    if (!(bits > 0 && bits % 8 === 0 && bits <= 65536 * 8)) throw new DOMException("Unsupported key length", "OperationError");
    return new CryptoKey(keyToken, random(bits / 8), hash, extractable, usagesOf(usages));
  }
  async exportKey(format, key) {
    if (format !== "raw") throw new DOMException("Unsupported key format", "NotSupportedError");
    if (!(key instanceof CryptoKey)) throw new TypeError("parameter 2 is not of type 'CryptoKey'");
    if (!key.extractable) throw new DOMException("key is not extractable", "InvalidAccessError");
    return keyBytes(key).slice(0);
  }
  async sign(algorithm, key, data) {
    if (algName(algorithm).toUpperCase() !== "HMAC") throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
    checkKey(key, "sign");
    return hostHmac(key.algorithm.hash.name, keyBytes(key), copyOf(data, "sign"));
  }
  async verify(algorithm, key, signature, data) {
    if (algName(algorithm).toUpperCase() !== "HMAC") throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
    checkKey(key, "verify");
    var expected = new Uint8Array(hostHmac(key.algorithm.hash.name, keyBytes(key), copyOf(data, "verify")));
    var given = new Uint8Array(copyOf(signature, "verify"));
    if (given.length !== expected.length) return false;
    var diff = 0;
    for (var i = 0; i < given.length; i++) diff |= given[i] ^ expected[i];
    return diff === 0;
  }
}

class Crypto {
  #subtle = new SubtleCrypto(keyToken);
  constructor(token) { if (token !== keyToken) throw new TypeError("Illegal constructor"); }
  get subtle() { return this.#subtle; }
  getRandomValues(array) { return getRandomValues.apply(undefined, arguments); }
  randomUUID() { return randomUUID(); }
}
var defs = { Crypto: Crypto, SubtleCrypto: SubtleCrypto, CryptoKey: CryptoKey };
for (var name in defs) {
  Object.defineProperty(defs[name].prototype, Symbol.toStringTag, { value: name, configurable: true });
  Object.defineProperty(global, name, { value: defs[name], writable: true, configurable: true });
}
Object.defineProperty(global, "crypto", { value: new Crypto(keyToken), writable: true, configurable: true, enumerable: true });
})`,
};
