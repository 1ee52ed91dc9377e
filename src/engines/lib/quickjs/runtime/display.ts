// `display`, in guest JS over one host call: what a JavaScript or TypeScript run shows comes back as
// MIME bundles in `results`, as the Python tiers' display() does (issue 37).
//
//   display(value)                       a rich item for a value: an object with a
//                                        [Symbol.for("Jupyter.display")]() method gives its own bundle
//                                        (Deno's convention); other objects and arrays come back as
//                                        application/json + text/plain, strings and the rest as text/plain
//   display(bundle, { raw: true })       a MIME bundle as is: {"text/html": "<b>hi</b>"}; binary types
//                                        (image/png, image/jpeg, image/gif, image/webp, application/pdf)
//                                        take base64 text or a Uint8Array; text/plain is added when missing
//
// The bundle crosses as one JSON string; the host parses it with the one parser (src/kit/display.ts):
// a malformed bundle (a MIME type off the list, bytes that are not base64 of the format) is a TypeError
// the guest can catch, and a run past its display caps ends with `output_limit` naming the cap.

import type { FamilySource } from "./family.ts";

export const display: FamilySource = {
  bindings: { show: { params: ["longString"], fn: (p, json: string) => p.display(json) } },
  source: String.raw`(function (host, internals, global) {
"use strict";
var show = host.show, stringify = internals.stringify;
var JUPYTER = Symbol.for("Jupyter.display");
var BINARY = { "image/png": 1, "image/jpeg": 1, "image/gif": 1, "image/webp": 1, "application/pdf": 1 };
var ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(bytes) {
  var out = "", i = 0, n = bytes.length;
  for (; i + 2 < n; i += 3) {
    var v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += ALPHABET[v >> 18] + ALPHABET[(v >> 12) & 63] + ALPHABET[(v >> 6) & 63] + ALPHABET[v & 63];
  }
  if (i < n) {
    var w = (bytes[i] << 16) | ((i + 1 < n ? bytes[i + 1] : 0) << 8);
    out += ALPHABET[w >> 18] + ALPHABET[(w >> 12) & 63] + (i + 1 < n ? ALPHABET[(w >> 6) & 63] : "=") + "=";
  }
  return out;
}

function plain(value) {
  if (typeof value === "string") return value;
  if (value === undefined || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") return String(value);
  try { var text = stringify(value, null, 2); if (typeof text === "string") return text; } catch (e) {}
  return String(value);
}

function rawBundle(bundle) {
  if (bundle === null || typeof bundle !== "object") throw new TypeError("display(bundle, { raw: true }) takes an object of MIME types");
  var data = {};
  Object.keys(bundle).forEach(function (mime) {
    var v = bundle[mime];
    if (BINARY[mime] === 1 && v instanceof Uint8Array) v = base64(v);
    data[mime] = v;
  });
  if (typeof data["text/plain"] !== "string") data["text/plain"] = typeof data["text/markdown"] === "string" ? data["text/markdown"] : "<" + Object.keys(data).join(", ") + ">";
  return data;
}

function bundleOf(value) {
  if (value !== null && (typeof value === "object" || typeof value === "function") && typeof value[JUPYTER] === "function")
    return rawBundle(value[JUPYTER]());
  var data = { "text/plain": plain(value) };
  if (value !== null && typeof value === "object" && !(value instanceof Error)) {
    try { var json = stringify(value); if (typeof json === "string") data["application/json"] = internals.parseJSON(json); } catch (e) {}
  }
  return data;
}

function display(value, options) {
  var raw = options !== null && typeof options === "object" && options.raw === true;
  var data = raw ? rawBundle(value) : bundleOf(value);
  show(stringify({ data: data }));
}
Object.defineProperty(global, "display", { value: display, writable: true, configurable: true, enumerable: false });
})`,
};
