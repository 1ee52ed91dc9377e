// `Intl` and the locale-sensitive methods (toLocaleString on numbers, bigints and dates,
// toLocaleDateString/TimeString, localeCompare) over the host's ICU. The guest objects keep the
// locales and options as JSON text; every call sends that text and primitive arguments to the host
// and gets a string or JSON back (platform.ts copies options as primitives only). The default locale
// is en-US and the default time zone UTC — the box's, never the host's.

import type { FamilySource } from "./family.ts";

export const intl: FamilySource = {
  bindings: {
    call: {
      params: ["string", "string", "string", "string", "string"],
      fn: (p, kind: string, l: string, o: string, method: string, args: string) => p.intl(kind, l, o, method, args),
    },
    canonical: { params: ["string"], fn: (p, l: string) => p.canonicalLocales(l) },
    toLocale: {
      params: ["string", "string", "string", "string"],
      fn: (p, type: string, value: string, l: string, o: string) => p.toLocale(type, value, l, o),
    },
  },
  source: String.raw`(function (host, internals, global) {
"use strict";
var call = host.call, toLocale = host.toLocale, stringify = internals.stringify, parseJSON = internals.parseJSON;
var dateTime = Date.prototype.getTime, numValue = Number.prototype.valueOf, bigValue = BigInt.prototype.valueOf;

function localesArg(l) {
  if (l === undefined) return "";
  if (typeof l === "string") return stringify(l);
  if (l !== null && typeof l === "object" && typeof l[Symbol.iterator] === "function") return stringify(Array.from(l, String));
  if (l !== null && typeof l === "object" && typeof l.toString === "function") return stringify(String(l));
  throw new TypeError("Incorrect locale information provided");
}
function optionsArg(o) {
  if (o === undefined) return "";
  if (o === null) throw new TypeError("Cannot convert undefined or null to object");
  var out = {};
  for (var k in o) {
    var v = o[k], t = typeof v;
    if (t === "string" || t === "boolean" || (t === "number" && v === v && isFinite(v))) out[k] = v;
    else if (t === "number" || t === "bigint") out[k] = String(v);
    else if (v !== undefined && t !== "function" && t !== "symbol") out[k] = String(v);
  }
  return stringify(out);
}
function numArg(v) {
  if (typeof v === "bigint") return ["b", "" + v];
  if (typeof v === "string") return v;
  v = Number(v);
  if (v !== v || !isFinite(v) || (v === 0 && 1 / v < 0)) return v !== v ? "NaN" : v === 0 ? "-0" : v > 0 ? "Infinity" : "-Infinity";
  return v;
}
function dateArg(d) {
  var t = d === undefined ? Date.now() : d instanceof Date ? dateTime.call(d) : Number(d);
  if (!isFinite(t)) throw new RangeError("Invalid time value");
  return t;
}

function define(kind, bound, shape) {
  class F {
    #l; #o;
    constructor(locales, options) {
      if (new.target === undefined && kind !== "NumberFormat" && kind !== "DateTimeFormat" && kind !== "Collator") throw new TypeError("Constructor Intl." + kind + " requires 'new'");
      this.#l = localesArg(locales); this.#o = optionsArg(options);
      call(kind, this.#l, this.#o, "resolvedOptions", "[]"); // validates: a bad locale or time zone throws RangeError here
    }
    resolvedOptions() { return parseJSON(call(kind, this.#l, this.#o, "resolvedOptions", "[]")); }
    static supportedLocalesOf(locales) { return locales === undefined ? [] : typeof locales === "string" ? [locales] : Array.from(locales, String); }
    static {
      shape.invoke = function (f, method, args) { return parseJSON(call(kind, f.#l, f.#o, method, stringify(args))); };
    }
  }
  for (var name in shape.methods) Object.defineProperty(F.prototype, name, { value: nonConstructor(name, shape.methods[name]), writable: true, configurable: true });
  bound.forEach(function (name) {
    var fn = shape.methods[name];
    delete F.prototype[name];
    var cache = new WeakMap();
    Object.defineProperty(F.prototype, name, { configurable: true, get: function () {
      var b = cache.get(this);
      if (!b) { var self = this; b = function (a, c) { return fn.call(self, a, c); }; cache.set(this, b); }
      return b;
    } });
  });
  Object.defineProperty(F, "name", { value: kind });
  Object.defineProperty(F.prototype, Symbol.toStringTag, { value: "Intl." + kind, configurable: true });
  return F;
}
function shape(methods) { var s = { methods: methods, invoke: null }; return s; }

var nf = shape({
  format: function (v) { return nf.invoke(this, "format", [numArg(v)]); },
  formatToParts: function (v) { return nf.invoke(this, "formatToParts", [numArg(v)]); },
  formatRange: function (a, b) { return nf.invoke(this, "formatRange", [numArg(a), numArg(b)]); },
});
var dtf = shape({
  format: function (d) { return dtf.invoke(this, "format", [dateArg(d)]); },
  formatToParts: function (d) { return dtf.invoke(this, "formatToParts", [dateArg(d)]); },
  formatRange: function (a, b) { return dtf.invoke(this, "formatRange", [dateArg(a), dateArg(b)]); },
});
var col = shape({ compare: function (a, b) { return col.invoke(this, "compare", [String(a), String(b)]); } });
var pr = shape({
  select: function (n) { return pr.invoke(this, "select", [numArg(n)]); },
  selectRange: function (a, b) { return pr.invoke(this, "selectRange", [numArg(a), numArg(b)]); },
});
var rtf = shape({
  format: function (v, unit) { return rtf.invoke(this, "format", [numArg(v), String(unit)]); },
  formatToParts: function (v, unit) { return rtf.invoke(this, "formatToParts", [numArg(v), String(unit)]); },
});
var lf = shape({
  format: function (list) { return lf.invoke(this, "format", [Array.from(list, String)]); },
  formatToParts: function (list) { return lf.invoke(this, "formatToParts", [Array.from(list, String)]); },
});
var dn = shape({ of: function (code) { return dn.invoke(this, "of", [String(code)]); } });

var Intl = {};
var classes = {
  NumberFormat: define("NumberFormat", ["format"], nf),
  DateTimeFormat: define("DateTimeFormat", ["format"], dtf),
  Collator: define("Collator", ["compare"], col),
  PluralRules: define("PluralRules", [], pr),
  RelativeTimeFormat: define("RelativeTimeFormat", [], rtf),
  ListFormat: define("ListFormat", [], lf),
  DisplayNames: define("DisplayNames", [], dn),
};
for (var k in classes) Object.defineProperty(Intl, k, { value: classes[k], writable: true, configurable: true });
Object.defineProperty(Intl, "getCanonicalLocales", { writable: true, configurable: true, value: nonConstructor("getCanonicalLocales", function (l) {
  return l === undefined ? [] : parseJSON(host.canonical(localesArg(l)));
}) });
Object.defineProperty(Intl, Symbol.toStringTag, { value: "Intl", configurable: true });
Object.defineProperty(global, "Intl", { value: Intl, writable: true, configurable: true });

// Built-in methods are not constructors (test262: not-a-constructor); a function expression is one, so
// each is re-made as a method definition with the original's name and length.
function nonConstructor(name, fn) {
  var m = { [name](...args) { return fn.apply(this, args); } }[name];
  Object.defineProperty(m, "length", { value: fn.length });
  return m;
}
function method(proto, name, fn) { Object.defineProperty(proto, name, { value: nonConstructor(name, fn), writable: true, configurable: true }); }
var toLocaleNumber = { toLocaleString: function toLocaleString(l, o) { var n = numValue.call(this); return toLocale("number", n === 0 && 1 / n < 0 ? "-0" : "" + n, localesArg(l), optionsArg(o)); } };
method(Number.prototype, "toLocaleString", toLocaleNumber.toLocaleString);
method(BigInt.prototype, "toLocaleString", function toLocaleString(l, o) { return toLocale("bigint", "" + bigValue.call(this), localesArg(l), optionsArg(o)); });
method(Date.prototype, "toLocaleString", function toLocaleString(l, o) { return toLocale("date", "" + dateTime.call(this), localesArg(l), optionsArg(o)); });
method(Date.prototype, "toLocaleDateString", function toLocaleDateString(l, o) { return toLocale("dateDate", "" + dateTime.call(this), localesArg(l), optionsArg(o)); });
method(Date.prototype, "toLocaleTimeString", function toLocaleTimeString(l, o) { return toLocale("dateTime", "" + dateTime.call(this), localesArg(l), optionsArg(o)); });
method(String.prototype, "localeCompare", function localeCompare(that, l, o) {
  if (this === undefined || this === null) throw new TypeError("String.prototype.localeCompare called on null or undefined");
  return new classes.Collator(l, o).compare(String(this), String(that));
});
})`,
};
