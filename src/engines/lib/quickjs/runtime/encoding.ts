// TextEncoder, TextDecoder (UTF-8 with fatal/ignoreBOM/stream, UTF-16LE, latin1) and atob/btoa, in
// guest JS: byte arithmetic on the guest's own values, so no host call (it would only add a copy).

import type { FamilySource } from "./family.ts";

export const encoding: FamilySource = {
  source: String.raw`(function (host, internals, global) {
"use strict";
var DOMException = internals.DOMException;

function encodeUtf8(s) {
  var out = new Uint8Array(s.length * 3), n = 0;
  for (var i = 0; i < s.length; i++) {
    var c = s.charCodeAt(i);
    if (c < 0x80) { out[n++] = c; continue; }
    if (c < 0x800) { out[n++] = 0xc0 | (c >> 6); out[n++] = 0x80 | (c & 63); continue; }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      var d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        var cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++;
        out[n++] = 0xf0 | (cp >> 18); out[n++] = 0x80 | ((cp >> 12) & 63); out[n++] = 0x80 | ((cp >> 6) & 63); out[n++] = 0x80 | (cp & 63);
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate becomes U+FFFD
    out[n++] = 0xe0 | (c >> 12); out[n++] = 0x80 | ((c >> 6) & 63); out[n++] = 0x80 | (c & 63);
  }
  return out.slice(0, n);
}

class TextEncoder {
  get encoding() { return "utf-8"; }
  encode(input) { return encodeUtf8(input === undefined ? "" : String(input)); }
  encodeInto(src, dest) {
    if (!(dest instanceof Uint8Array)) throw new TypeError('The "dest" argument must be an instance of Uint8Array.');
    src = String(src);
    var read = 0, written = 0;
    for (var i = 0; i < src.length; i++) {
      var c = src.charCodeAt(i), units = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < src.length) { var d = src.charCodeAt(i + 1); if (d >= 0xdc00 && d <= 0xdfff) units = 2; }
      var bytes = encodeUtf8(src.substr(i, units));
      if (written + bytes.length > dest.length) break;
      dest.set(bytes, written); written += bytes.length; read += units; i += units - 1;
    }
    return { read: read, written: written };
  }
}

var LABELS = { "utf-8": "utf-8", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8", "unicode11utf8": "utf-8", "unicode20utf8": "utf-8", "x-unicode20utf8": "utf-8",
  "utf-16le": "utf-16le", "utf-16": "utf-16le", "utf-16be": "utf-16be", "unicodefffe": "utf-16be", "ucs-2": "utf-16le", "unicode": "utf-16le", "csunicode": "utf-16le", "iso-10646-ucs-2": "utf-16le", "unicodefeff": "utf-16le",
  "latin1": "windows-1252", "iso-8859-1": "windows-1252", "windows-1252": "windows-1252", "ascii": "windows-1252", "us-ascii": "windows-1252", "l1": "windows-1252", "cp1252": "windows-1252", "iso8859-1": "windows-1252", "x-cp1252": "windows-1252",
  "ansi_x3.4-1968": "windows-1252", "cp819": "windows-1252", "csisolatin1": "windows-1252", "ibm819": "windows-1252", "iso-ir-100": "windows-1252",
  "iso88591": "windows-1252", "iso_8859-1": "windows-1252", "iso_8859-1:1987": "windows-1252" };
var CP1252 = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178];

function bytesOf(input) {
  if (input === undefined) return new Uint8Array(0);
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && input instanceof SharedArrayBuffer)) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError('The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
}

function invalid(enc) { return new TypeError("The encoded data was not valid for encoding " + enc); }

class TextDecoder {
  #encoding; #fatal; #ignoreBOM; #pending = []; #bomSeen = false;
  constructor(label, options) {
    var key = label === undefined ? "utf-8" : String(label).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "").toLowerCase(); // ASCII whitespace only
    var enc = LABELS[key];
    if (!enc) throw new RangeError('The "' + label + '" encoding is not supported');
    options = options == null ? {} : options;
    this.#encoding = enc; this.#fatal = !!options.fatal; this.#ignoreBOM = !!options.ignoreBOM;
  }
  get encoding() { return this.#encoding; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  decode(input, options) {
    var stream = !!(options && options.stream);
    var bytes = bytesOf(input);
    if (this.#pending.length) { var joined = new Uint8Array(this.#pending.length + bytes.length); joined.set(this.#pending); joined.set(bytes, this.#pending.length); bytes = joined; this.#pending = []; }
    var r = this.#encoding === "utf-8" ? this.#utf8(bytes, stream) : this.#encoding !== "windows-1252" ? this.#utf16(bytes, stream) : this.#latin1(bytes);
    if (!this.#ignoreBOM && !this.#bomSeen && r.length) {
      this.#bomSeen = true;
      if (r.charCodeAt(0) === 0xfeff && this.#encoding !== "windows-1252") r = r.slice(1);
    }
    if (!stream) this.#bomSeen = false;
    return r;
  }
  #latin1(b) {
    var parts = [], s = "";
    for (var i = 0; i < b.length; i++) {
      var x = b[i];
      s += String.fromCharCode(x >= 0x80 && x < 0xa0 ? CP1252[x - 0x80] : x);
      if (s.length > 8192) { parts.push(s); s = ""; }
    }
    parts.push(s);
    return parts.join("");
  }
  // UTF-16 (either byte order) as the Encoding standard decodes it: a surrogate pair split across
  // streamed chunks is held until its second half arrives; a lone surrogate is an error (U+FFFD, or a
  // throw when fatal); a trailing odd byte or lead surrogate at the end of the stream is one error.
  #utf16(b, stream) {
    var be = this.#encoding === "utf-16be", name = this.#encoding, fatal = this.#fatal;
    var n = b.length & ~1, units = [], parts = [], i = 0;
    function unit(k) { return be ? (b[k] << 8) | b[k + 1] : b[k] | (b[k + 1] << 8); }
    function bad() { if (fatal) throw invalid(name); units.push(0xfffd); }
    for (; i < n; i += 2) {
      var c = unit(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        if (i + 2 >= n) break;
        var d = unit(i + 2);
        if (d >= 0xdc00 && d <= 0xdfff) { units.push(c, d); i += 2; } else bad();
      } else if (c >= 0xdc00 && c <= 0xdfff) bad();
      else units.push(c);
      if (units.length > 8192) { parts.push(String.fromCharCode.apply(null, units)); units = []; }
    }
    if (i < b.length) { if (stream) this.#pending = Array.prototype.slice.call(b, i); else bad(); }
    parts.push(String.fromCharCode.apply(null, units));
    return parts.join("");
  }
  #utf8(b, stream) {
    var units = [], parts = [], fatal = this.#fatal, i = 0, n = b.length;
    function bad() { if (fatal) throw invalid("utf-8"); units.push(0xfffd); }
    while (i < n) {
      var x = b[i];
      if (x < 0x80) { units.push(x); i++; }
      else {
        var need = 0, cp = 0, lo = 0x80, hi = 0xbf;
        if (x >= 0xc2 && x <= 0xdf) { need = 1; cp = x & 0x1f; }
        else if (x >= 0xe0 && x <= 0xef) { need = 2; cp = x & 0xf; if (x === 0xe0) lo = 0xa0; if (x === 0xed) hi = 0x9f; }
        else if (x >= 0xf0 && x <= 0xf4) { need = 3; cp = x & 7; if (x === 0xf0) lo = 0x90; if (x === 0xf4) hi = 0x8f; }
        else { bad(); i++; continue; }
        var j = 1, ok = true;
        for (; j <= need; j++) {
          if (i + j >= n) { ok = false; break; }
          var y = b[i + j];
          if (y < lo || y > hi) { ok = false; break; }
          lo = 0x80; hi = 0xbf;
          cp = (cp << 6) | (y & 63);
        }
        if (!ok && i + j >= n && stream) { this.#pending = Array.prototype.slice.call(b, i); break; }
        if (!ok) { bad(); i += j; continue; }
        if (cp >= 0x10000) { cp -= 0x10000; units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff)); }
        else units.push(cp);
        i += need + 1;
      }
      if (units.length >= 8192) { parts.push(String.fromCharCode.apply(null, units)); units = []; }
    }
    parts.push(String.fromCharCode.apply(null, units));
    return parts.join("");
  }
}

// --- base64 (forgiving-base64 decode, as in the HTML spec) ---------------------------------------
var ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
var LOOKUP = new Int16Array(256).fill(-1);
for (var q = 0; q < 64; q++) LOOKUP[ALPHABET.charCodeAt(q)] = q;

function btoa(data) {
  if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
  var s = String(data), out = [], chunk = "";
  for (var i = 0; i < s.length; i += 3) {
    var a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
    if (a > 255 || b > 255 || c > 255) throw new DOMException("Invalid character", "InvalidCharacterError");
    var n = (a << 16) | ((b || 0) << 8) | (c || 0);
    chunk += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + (i + 1 < s.length ? ALPHABET[(n >> 6) & 63] : "=") + (i + 2 < s.length ? ALPHABET[n & 63] : "=");
    if (chunk.length > 8192) { out.push(chunk); chunk = ""; }
  }
  out.push(chunk);
  return out.join("");
}

function atob(data) {
  if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
  var s = String(data).replace(/[\t\n\f\r ]/g, "");
  if (s.length % 4 === 0) s = s.replace(/==?$/, "");
  if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new DOMException("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
  var out = [], chunk = "", bits = 0, acc = 0;
  for (var i = 0; i < s.length; i++) {
    acc = (acc << 6) | LOOKUP[s.charCodeAt(i)]; bits += 6;
    if (bits >= 8) { bits -= 8; chunk += String.fromCharCode((acc >> bits) & 255); }
    if (chunk.length > 8192) { out.push(chunk); chunk = ""; }
  }
  out.push(chunk);
  return out.join("");
}

// For the Blob family: UTF-8 both ways, as captured now (user code may replace the globals later).
internals.encodeUtf8 = encodeUtf8; internals.TextDecoder = TextDecoder;
var defs = { TextEncoder: TextEncoder, TextDecoder: TextDecoder };
for (var name in defs) {
  Object.defineProperty(defs[name].prototype, Symbol.toStringTag, { value: name, configurable: true });
  Object.defineProperty(global, name, { value: defs[name], writable: true, configurable: true });
}
Object.defineProperty(global, "atob", { value: atob, writable: true, configurable: true, enumerable: true });
Object.defineProperty(global, "btoa", { value: btoa, writable: true, configurable: true, enumerable: true });
})`,
};
