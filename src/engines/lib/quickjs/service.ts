// The service realm: guest-side JavaScript that serialises results and formats console output.
//
// It is evaluated in its own context (a separate realm) of each QuickJS runtime, never in the user's
// context. A stateless run's runtime evaluates only SERVICE_CORE_SOURCE when it is built: compiling the
// whole of SERVICE_SOURCE takes about 2 ms of CPU in QuickJS, most of what building a runtime costs, and
// a run parked on a host call holds a runtime of its own (so 1,000 parked runs build 1,000). The core
// says plain data exactly; the rest is compiled into the same realm the first time a run of that
// runtime needs it (a value the core refuses, console output, an exception: cell.ts, `#service`).
// Compiling it later is as safe as compiling it first: what makes the service trustworthy is the realm,
// not the moment (next paragraph), and guest code never runs in it. User code cannot name, reach or tamper with it: no object of this realm is ever
// handed to user code (the host calls these functions with user values as arguments and gets strings
// back). That is stronger than capturing intrinsics in a prelude: the serialiser's `Object.keys`,
// `JSON.stringify`, `Map.prototype.forEach`, … are the pristine ones of a realm no guest code runs in.
// Method calls use `.call` freely: the service realm's Function.prototype is as unreachable as the rest.
// Brand checks use the service realm's own methods (`Map.prototype.forEach`, `Date.prototype.getTime`,
// the `%TypedArray%` tag getter): QuickJS checks the class id, so they work across realms and cannot be
// spoofed with `Symbol.toStringTag`.
//
// What still runs guest code while serialising: own enumerable getters, `toJSON`, and Proxy traps of
// the user's values — inside the guest, under the same deadline and memory cap. Never in the host.
//
// Encoding (a JSON text the host rebuilds, see decode.ts): either "=" and plain JSON (the fast path, see
// serialize), or a tagged tree: strings, booleans, null and finite numbers
// other than -0 are themselves; everything else is a tagged array:
//   ["u"] undefined · ["n","NaN"|"Infinity"|"-Infinity"|"-0"] · ["b","123"] bigint · ["y",desc] symbol
//   ["f",name] function · ["a",...items] array · ["o",k1,v1,...] object · ["m",k1,v1,...] Map
//   ["s",...items] Set · ["d",time] Date · ["t",type,...items] typed array / ArrayBuffer
//   ["e",name,message,stack] Error · ["c"] cycle · ["x"] nested deeper than the depth limit · ["p"] Promise

/**
 * Caps (in UTF-16 code units) on each field of an exception read from the guest. A longer field is cut
 * in the guest and ends with "... [N characters cut, limit L]".
 */
export const ERROR_FIELD_CAPS = { name: 256, message: 8192, stack: 16384 } as const;

/**
 * JSON.stringify's replacer for the fast path, shared by SERVICE_SOURCE and SERVICE_CORE_SOURCE (one
 * text, so the two say plain data identically). It needs `objToString`, `isArray` and `isView` in scope.
 */
const PLAIN_ONLY = String.raw`function NotPlain() {}
var NOT_PLAIN = new NotPlain();

// JSON.stringify's replacer: called with each value after toJSON. A value that is not what the holder
// holds was produced by toJSON (a Date, a custom toJSON): refused, so the walker keeps its meaning.
function plainOnly(key, v) {
  var t = typeof v;
  if (t === "number") {
    if (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0)) throw NOT_PLAIN;
  } else if (t === "object" && v !== null) {
    var tag = objToString.call(v);
    if (tag === "[object Array]" ? !isArray(v) : tag !== "[object Object]" || isView(v)) throw NOT_PLAIN;
  } else if (t !== "string" && t !== "boolean" && v !== null) throw NOT_PLAIN;
  var held = this[key];
  if (held !== v && held === held) throw NOT_PLAIN;
  return v;
}`;

/**
 * The source of the service realm. Evaluates to `{ serialize, walk, format, errorInfo }`: `walk` is
 * `serialize` without its fast path, for a value the core already refused (its getters and `toJSON`
 * then run twice, as they do when the fast path here refuses, not three times).
 */
export const SERVICE_SOURCE = String.raw`(function () {
"use strict";
var O = Object, keys = O.keys, gopd = O.getOwnPropertyDescriptor, getProto = O.getPrototypeOf;
var isArray = Array.isArray, apply = Reflect.apply, ownKeys = Reflect.ownKeys;
var stringify = JSON.stringify, objToString = O.prototype.toString;
var mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
var mapSize = gopd(Map.prototype, "size").get, setSize = gopd(Set.prototype, "size").get;
var dateTime = Date.prototype.getTime, dateIso = Date.prototype.toISOString;
var isView = ArrayBuffer.isView, abSlice = ArrayBuffer.prototype.slice;
var taProto = getProto(Uint8Array.prototype);
var taTag = gopd(taProto, Symbol.toStringTag).get, taLength = gopd(taProto, "length").get;
var abByteLength = gopd(ArrayBuffer.prototype, "byteLength").get;
var regexpToString = RegExp.prototype.toString, symToString = Symbol.prototype.toString;
var fnToString = Function.prototype.toString, errToString = Error.prototype.toString;
var push = Array.prototype.push, join = Array.prototype.join, arrSlice = Array.prototype.slice;
var strRepeat = String.prototype.repeat, strSlice = String.prototype.slice, strIndexOf = String.prototype.indexOf;
var strReplace = String.prototype.replace, regexpTest = RegExp.prototype.test;
var MAX_DEPTH = 200;
var MAX_NAME = ${ERROR_FIELD_CAPS.name}, MAX_MESSAGE = ${ERROR_FIELD_CAPS.message}, MAX_STACK = ${ERROR_FIELD_CAPS.stack};
if (typeof Error.isError !== "function") throw new Error("this QuickJS build has no Error.isError");
var isError = Error.isError;

function brand(v) {
  // The class of v. The tag is only a hint (user code can set Symbol.toStringTag); every class other
  // than plain Object is confirmed by a method that checks QuickJS's class id, so a spoofed tag falls
  // back to "Object". Plain objects and arrays cost no exception.
  var tag = objToString.call(v);
  switch (tag) {
    case "[object Object]": return isView(v) ? viewBrand(v) : "Object";
    case "[object Array]": return isArray(v) ? "Array" : "Object";
    case "[object Map]": try { mapSize.call(v); return "Map"; } catch (e) { return "Object"; }
    case "[object Set]": try { setSize.call(v); return "Set"; } catch (e) { return "Object"; }
    case "[object Date]": try { dateTime.call(v); return "Date"; } catch (e) { return "Object"; }
    case "[object ArrayBuffer]": try { abByteLength.call(v); return "ArrayBuffer"; } catch (e) { return "Object"; }
    case "[object Error]": return isError(v) ? "Error" : "Object";
    case "[object RegExp]": try { regexpToString.call(v); return "RegExp"; } catch (e) { return "Object"; }
    case "[object Promise]": return "Promise";
  }
  return isView(v) ? viewBrand(v) : "Object";
}

function viewBrand(v) {
  var t = taTag.call(v);
  return t === undefined ? "DataView" : t;
}

function LimitError() {}

// --- serialise: value -> JSON text -------------------------------------------------------------
// Fast path: data that JSON already says exactly (null, booleans, finite numbers other than -0,
// strings, plain objects and arrays of those; no toJSON, holes or cycles) is written by this realm's
// own JSON.stringify, with a replacer that refuses anything else; the text starts with "=" and the host
// JSON.parses the rest. Anything refused (or any exception) takes the tagging walker below instead.
function serialize(value, maxBytes) {
  var json;
  try { json = stringify(value, plainOnly); } catch (e) { json = undefined; }
  if (typeof json === "string") {
    if (json.length > maxBytes) throw new LimitError();
    return "=" + json;
  }
  return walk(value, maxBytes);
}

// The tagging walker alone: for a value the fast path (here or the core's) refused.
function walk(value, maxBytes) {
  var budget = { left: maxBytes };
  var tree = enc(value, "", [], budget);
  var text = stringify(tree);
  if (text.length > maxBytes) throw new LimitError();
  return text;
}

${PLAIN_ONLY}

function spend(budget, n) { budget.left -= n; if (budget.left < 0) throw new LimitError(); }

function encNumber(v) {
  if (v !== v) return ["n", "NaN"];
  if (v === Infinity) return ["n", "Infinity"];
  if (v === -Infinity) return ["n", "-Infinity"];
  if (v === 0 && 1 / v < 0) return ["n", "-0"];
  return v;
}

function enc(v, key, stack, budget) {
  var t = typeof v;
  spend(budget, 4);
  if (v === null || t === "boolean") return v;
  if (t === "string") { spend(budget, v.length); return v; }
  if (t === "number") return encNumber(v);
  if (t === "undefined") return ["u"];
  if (t === "bigint") return ["b", "" + v];
  if (t === "symbol") return ["y", symToString.call(v)];
  if (t === "function") return ["f", fnName(v)];
  // objects
  for (var i = 0; i < stack.length; i++) if (stack[i] === v) return ["c"];
  if (stack.length >= MAX_DEPTH) return ["x"];
  var b = brand(v);
  if (b === "Object" && typeof v.toJSON === "function") {
    var j = v.toJSON(key);
    if (typeof j !== "object" || j === null) return enc(j, key, stack, budget);
    if (j !== v) { v = j; b = brand(v); }
  }
  stack.push(v);
  var out;
  try {
    if (b === "Array") {
      out = ["a"];
      var n = v.length;
      for (var k = 0; k < n; k++) push.call(out, enc(v[k], "" + k, stack, budget));
    } else if (b === "Map") {
      out = ["m"];
      mapForEach.call(v, function (val, k2) { push.call(out, enc(k2, "", stack, budget), enc(val, "", stack, budget)); });
    } else if (b === "Set") {
      out = ["s"];
      setForEach.call(v, function (val) { push.call(out, enc(val, "", stack, budget)); });
    } else if (b === "Date") {
      var time = dateTime.call(v);
      out = ["d", time === time ? time : null];
    } else if (b === "ArrayBuffer") {
      out = ["t", "ArrayBuffer"];
      var bytes = new Uint8Array(abSlice.call(v));
      spend(budget, bytes.length * 4);
      for (var q = 0; q < bytes.length; q++) push.call(out, bytes[q]);
    } else if (b === "DataView") {
      out = ["o"];
    } else if (b !== "Object" && b !== "Error" && b !== "RegExp" && b !== "Promise") {
      var len = taLength.call(v);
      out = ["t", b];
      spend(budget, len * 4);
      var big = b === "BigInt64Array" || b === "BigUint64Array";
      for (var r = 0; r < len; r++) push.call(out, big ? "" + v[r] : encNumber(v[r]));
    } else if (b === "Error") {
      out = ["e", str(v.name), str(v.message), str(v.stack)];
    } else if (b === "RegExp") {
      out = regexpToString.call(v);
    } else if (b === "Promise") {
      out = ["p"];
    } else {
      out = ["o"];
      var ks = keys(v);
      for (var m = 0; m < ks.length; m++) {
        var kk = ks[m];
        spend(budget, kk.length);
        push.call(out, kk, enc(v[kk], kk, stack, budget));
      }
    }
  } finally {
    stack.pop();
  }
  return out;
}

function str(v) { return v === undefined ? "" : typeof v === "string" ? v : "" + v; }

function fnName(f) {
  var d = gopd(f, "name");
  var n = d && typeof d.value === "string" ? d.value : "";
  return n;
}

// --- format: console arguments -> text, like Node's util.format / util.inspect -----------------
function format(args) {
  var first = args[0], out = [], start = 0;
  if (typeof first === "string" && strIndexOf.call(first, "%") >= 0 && args.length > 1) {
    var ai = 1, s = "", i = 0;
    while (i < first.length) {
      var c = first[i];
      if (c === "%" && i + 1 < first.length) {
        var d = first[i + 1];
        if (d === "%") { s += "%"; i += 2; continue; }
        if (ai < args.length && (d === "s" || d === "d" || d === "i" || d === "f" || d === "j" || d === "o" || d === "O" || d === "c")) {
          var a = args[ai++];
          if (d === "s") s += typeof a === "string" ? a : inspect(a, 1, []);
          else if (d === "d") s += typeof a === "bigint" ? a + "n" : typeof a === "object" ? "NaN" : fmtNum(+a);
          else if (d === "i") s += typeof a === "bigint" ? a + "n" : typeof a === "object" ? "NaN" : fmtNum(parseInt(a, 10));
          else if (d === "f") s += typeof a === "symbol" ? "NaN" : fmtNum(parseFloat(a));
          else if (d === "j") { try { s += stringify(a); } catch (e) { s += "[Circular]"; } }
          else if (d === "o" || d === "O") s += inspect(a, 4, []);
          i += 2; continue;
        }
      }
      s += c; i++;
    }
    push.call(out, s);
    start = ai;
  }
  for (var k = start; k < args.length; k++) {
    var v = args[k];
    push.call(out, typeof v === "string" ? v : inspect(v, 2, []));
  }
  return join.call(out, " ");
}

function fmtNum(n) { return n === 0 && 1 / n < 0 ? "-0" : "" + n; }

function quote(s) {
  s = strReplace.call(s, /\\/g, "\\\\");
  s = strReplace.call(s, /\n/g, "\\n");
  if (strIndexOf.call(s, "'") < 0) return "'" + s + "'";
  if (strIndexOf.call(s, '"') < 0) return '"' + s + '"';
  return "'" + strReplace.call(s, /'/g, "\\'") + "'";
}

function keyText(k) {
  if (typeof k === "symbol") return "[" + symToString.call(k) + "]";
  return regexpTest.call(/^[A-Za-z_$][A-Za-z0-9_$]*$/, k) ? k : quote(k);
}

function ctorName(v) {
  try {
    var p = getProto(v);
    if (p === null) return null;
    var d = gopd(p, "constructor");
    var c = d && d.value;
    if (typeof c === "function") { var n = fnName(c); if (n) return n; }
  } catch (e) {}
  return "Object";
}

function wrap(open, items, close, indent) {
  if (items.length === 0) return open + close;
  var total = 0;
  for (var i = 0; i < items.length; i++) total += items[i].length + 2;
  var multiline = total + open.length > 72;
  for (var j = 0; j < items.length && !multiline; j++) if (apply(strIndexOf, items[j], ["\n"]) >= 0) multiline = true;
  if (!multiline) return open + " " + join.call(items, ", ") + " " + close;
  var pad = apply(strRepeat, " ", [indent + 2]);
  var lines = [];
  for (var k = 0; k < items.length; k++) push.call(lines, pad + apply(strReplace, items[k], [/\n/g, "\n" + pad]));
  return open + "\n" + join.call(lines, ",\n") + "\n" + apply(strRepeat, " ", [indent]) + close;
}

function inspect(v, depth, seen) {
  var t = typeof v;
  if (t === "string") return seen.length ? quote(v) : v;
  if (t === "number") return fmtNum(v);
  if (t === "bigint") return v + "n";
  if (t === "symbol") return symToString.call(v);
  if (t === "undefined" || v === null || t === "boolean") return "" + v;
  if (t === "function") {
    var src = "";
    try { src = fnToString.call(v); } catch (e) {}
    var n = fnName(v);
    if (strSlice.call(src, 0, 6) === "class ") return "[class " + (n || "(anonymous)") + "]";
    return "[Function: " + (n || "(anonymous)") + "]";
  }
  for (var i = 0; i < seen.length; i++) if (seen[i] === v) return "[Circular]";
  var b = brand(v);
  if (b === "Date") { var tm = dateTime.call(v); return tm === tm ? dateIso.call(v) : "Invalid Date"; }
  if (b === "RegExp") return regexpToString.call(v);
  if (b === "Error") {
    var stack = v.stack, head;
    try { head = errToString.call(v); } catch (e) { head = "Error"; }
    return typeof stack === "string" && stack ? head + "\n" + strReplace.call(stack, /\n$/, "") : head;
  }
  if (b === "Promise") return "Promise { <unknown> }";
  var name = b === "Object" ? ctorName(v) : b;
  if (seen.length > depth) return b === "Array" ? "[Array]" : "[" + (name || "Object") + "]";
  if (b === "Object" && describeHook !== undefined && (name === "Blob" || name === "File")) {
    var shown2 = described(name, apply(describeHook, undefined, [v]), seen.length * 2);
    if (shown2 !== undefined) return shown2;
  }
  push.call(seen, v);
  var items = [], indent = (seen.length - 1) * 2, out;
  try {
    if (b === "Array") {
      var n2 = v.length, shown = n2 > 100 ? 100 : n2;
      for (var a = 0; a < shown; a++) push.call(items, a in v ? inspect(v[a], depth, seen) : "<empty>");
      if (n2 > shown) push.call(items, "... " + (n2 - shown) + " more items");
      out = wrap("[", items, "]", indent);
    } else if (b === "Map") {
      mapForEach.call(v, function (val, k) { if (items.length < 100) push.call(items, inspect(k, depth, seen) + " => " + inspect(val, depth, seen)); });
      out = "Map(" + mapSize.call(v) + ") " + wrap("{", items, "}", indent);
    } else if (b === "Set") {
      setForEach.call(v, function (val) { if (items.length < 100) push.call(items, inspect(val, depth, seen)); });
      out = "Set(" + setSize.call(v) + ") " + wrap("{", items, "}", indent);
    } else if (b === "ArrayBuffer") {
      out = "ArrayBuffer { byteLength: " + abByteLength.call(v) + " }";
    } else if (b !== "Object" && b !== "DataView") {
      var len = taLength.call(v), sh = len > 100 ? 100 : len;
      for (var q = 0; q < sh; q++) push.call(items, b === "BigInt64Array" || b === "BigUint64Array" ? v[q] + "n" : fmtNum(v[q]));
      if (len > sh) push.call(items, "... " + (len - sh) + " more items");
      out = b + "(" + len + ") " + wrap("[", items, "]", indent);
    } else {
      var ks = ownKeys(v);
      for (var m = 0; m < ks.length && items.length < 100; m++) {
        var k2 = ks[m], desc = gopd(v, k2);
        if (!desc || !desc.enumerable) continue;
        var shownVal = "get" in desc || "set" in desc
          ? (desc.get ? (desc.set ? "[Getter/Setter]" : "[Getter]") : "[Setter]")
          : inspect(desc.value, depth, seen);
        push.call(items, keyText(k2) + ": " + shownVal);
      }
      var prefix = name === null ? "[Object: null prototype] " : name === "Object" ? "" : name + " ";
      out = prefix + wrap("{", items, "}", indent);
    }
  } finally {
    seen.pop();
  }
  return out;
}

// A Blob or File as Node shows one: Blob { size: 3, type: 'text/plain' } (File adds name and
// lastModified). d comes from the blob family's describeBlob, a closure of the user realm no guest path
// reaches; only primitives of the expected types are used, anything else falls back to the plain view.
var describeHook;
function described(name, d, indent) {
  if (!isArray(d) || (d.length !== 2 && d.length !== 4) || typeof d[0] !== "number" || typeof d[1] !== "string") return undefined;
  var items = ["size: " + fmtNum(d[0]), "type: " + quote(d[1])];
  if (d.length === 4) {
    if (typeof d[2] !== "string" || typeof d[3] !== "number") return undefined;
    push.call(items, "name: " + quote(d[2]), "lastModified: " + fmtNum(d[3]));
  }
  return name + " " + wrap("{", items, "}", indent);
}

// --- errorInfo: an exception value -> JSON {isError, genuine, name, message, stack, ...} ----------
// Every field is cut to its cap here, in the guest, so a 30 MiB message never crosses to the host.
// "genuine" says the value is a real error object (Error.isError checks QuickJS's class, not a tag)
// whose prototype is the user realm's own InternalError.prototype (captured by the host before user
// code; the global is removed) and which has no own "name": the shape of an error QuickJS raised itself.
function cut(s, max) {
  return s.length > max ? strSlice.call(s, 0, max) + "... [" + (s.length - max) + " characters cut, limit " + max + "]" : s;
}

function errorInfo(e, internalProto) {
  if (isError(e)) {
    var name, message, stack, genuine = false;
    try { name = str(e.name); } catch (x) { name = "Error"; }
    try { message = str(e.message); } catch (x) { message = ""; }
    try { stack = str(e.stack); } catch (x) { stack = ""; }
    try { genuine = internalProto !== undefined && getProto(e) === internalProto && !gopd(e, "name"); } catch (x) {}
    var extra = {};
    try { var ln = gopd(e, "lineNumber"), fn = gopd(e, "fileName"), cn = gopd(e, "columnNumber");
      if (ln && typeof ln.value === "number") extra.line = ln.value;
      if (cn && typeof cn.value === "number") extra.column = cn.value;
      if (fn && typeof fn.value === "string") extra.file = cut(fn.value, MAX_NAME); } catch (x) {}
    return stringify({ isError: true, genuine: genuine, name: cut(name, MAX_NAME), message: cut(message, MAX_MESSAGE),
      stack: cut(stack, MAX_STACK), line: extra.line, column: extra.column, file: extra.file });
  }
  var text;
  if (typeof e === "string") text = quote(cut(e, MAX_MESSAGE));
  else { try { text = cut(inspect(e, 2, []), MAX_MESSAGE); } catch (x) { text = "(an uninspectable value)"; } }
  return stringify({ isError: false, genuine: false, isNull: e === null, name: "Error", message: "Uncaught " + text, stack: "" });
}

return { serialize: function (v, max) {
  try { return serialize(v, max); } catch (e) { if (e instanceof LimitError) return null; throw e; }
}, walk: function (v, max) {
  try { return walk(v, max); } catch (e) { if (e instanceof LimitError) return null; throw e; }
}, format: function (describe) {
  // describe: the user realm's Blob describer for this call, or undefined (restored around nested calls:
  // a guest getter may log while a value is being formatted).
  var outer = describeHook;
  describeHook = typeof describe === "function" ? describe : undefined;
  try { return format(arrSlice.call(arguments, 1)); } finally { describeHook = outer; }
}, errorInfo: errorInfo };
})()`;

/** The file name service frames carry in QuickJS stacks; user-facing stacks drop them. */
export const SERVICE_FILENAME = "wasmcell:service";

/**
 * The service realm's core, evaluated when a stateless run's runtime is built (a tenth of the cost of
 * SERVICE_SOURCE). Evaluates to `plain(value, maxBytes)`: SERVICE_SOURCE's fast path on its own, with
 * the same replacer, so plain data is said exactly as `serialize` says it ("=" and JSON), `null` when
 * that text is over `maxBytes`; `undefined` when the value is not plain data (or a getter threw), which
 * the host then hands to the full service's `walk`.
 */
export const SERVICE_CORE_SOURCE = String.raw`(function () {
"use strict";
var stringify = JSON.stringify, objToString = Object.prototype.toString;
var isArray = Array.isArray, isView = ArrayBuffer.isView;
${PLAIN_ONLY}
return function plain(value, maxBytes) {
  var json;
  try { json = stringify(value, plainOnly); } catch (e) { return undefined; }
  if (typeof json !== "string") return undefined;
  return json.length > maxBytes ? null : "=" + json;
};
})()`;

/** The file name the core's frames carry (dropped from user-facing stacks like SERVICE_FILENAME's). */
export const SERVICE_CORE_FILENAME = "wasmcell:service-core";
