// URL and URLSearchParams. Parsing, setters and the form-urlencoded codec are the host's WHATWG
// implementation (exact, and far too large to carry in the guest), called with strings and answered
// with strings; the objects, their state and URLSearchParams' list live in the guest.

import type { FamilySource } from "./family.ts";

export const url: FamilySource = {
  bindings: {
    parse: { params: ["string", "optString"], fn: (p, input: string, base: string | undefined) => p.url(input, base) },
    set: {
      params: ["string", "string", "string"],
      fn: (p, href: string, part: string, v: string) => p.urlSet(href, part, v),
    },
    formParse: { params: ["string"], fn: (p, text: string) => p.formParse(text) },
    formSerialize: { params: ["string"], fn: (p, json: string) => p.formSerialize(json) },
  },
  source: String.raw`(function (host, internals, global) {
"use strict";
var hostParse = host.parse, hostSet = host.set, formParse = host.formParse, formSerialize = host.formSerialize;
var parseJSON = internals.parseJSON, stringify = internals.stringify;
var HREF = 0, ORIGIN = 1, PROTOCOL = 2, USERNAME = 3, PASSWORD = 4, HOST = 5, HOSTNAME = 6, PORT = 7, PATHNAME = 8, SEARCH = 9, HASH = 10;

function usv(v) { v = String(v); return v.toWellFormed ? v.toWellFormed() : v; }
function parse(input, base) { var r = hostParse(input, base); return r === "" ? null : parseJSON(r); }
function invalid(input) { var e = new TypeError("Invalid URL"); e.code = "ERR_INVALID_URL"; e.input = input; return e; }

var link, relist;
class URLSearchParams {
  #list = []; #url = null;
  constructor(init) {
    if (init === undefined || init === null) return;
    if (typeof init === "object" || typeof init === "function") {
      if (typeof init[Symbol.iterator] === "function") {
        for (var pair of init) {
          if (pair === null || typeof pair !== "object" || typeof pair[Symbol.iterator] !== "function") throw new TypeError("Each query pair must be an iterable [name, value] tuple");
          var two = Array.from(pair);
          if (two.length !== 2) throw new TypeError("Each query pair must be an iterable [name, value] tuple");
          this.#list.push([usv(two[0]), usv(two[1])]);
        }
      } else {
        // A record<USVString, USVString>: two keys that convert to the same string (lone surrogates
        // become U+FFFD) are one entry, at the first one's place with the last one's value.
        var at = new Map();
        for (var key of Object.keys(init)) {
          var name = usv(key), value = usv(init[key]);
          if (at.has(name)) this.#list[at.get(name)][1] = value;
          else { at.set(name, this.#list.length); this.#list.push([name, value]); }
        }
      }
      return;
    }
    var s = usv(init);
    if (s[0] === "?") s = s.slice(1);
    this.#list = parseJSON(formParse(s));
  }
  static {
    link = function (params, u) { params.#url = u; };
    relist = function (params, search) { params.#list = parseJSON(formParse(search[0] === "?" ? search.slice(1) : search)); };
  }
  #update() { if (this.#url) setSearch(this.#url, this.toString()); }
  get size() { return this.#list.length; }
  append(name, value) { this.#list.push([usv(name), usv(value)]); this.#update(); }
  delete(name, value) {
    name = usv(name); var v = value === undefined ? undefined : usv(value);
    this.#list = this.#list.filter(function (p) { return !(p[0] === name && (v === undefined || p[1] === v)); });
    this.#update();
  }
  get(name) { name = usv(name); for (var p of this.#list) if (p[0] === name) return p[1]; return null; }
  getAll(name) { name = usv(name); return this.#list.filter(function (p) { return p[0] === name; }).map(function (p) { return p[1]; }); }
  has(name, value) { name = usv(name); var v = value === undefined ? undefined : usv(value); return this.#list.some(function (p) { return p[0] === name && (v === undefined || p[1] === v); }); }
  set(name, value) {
    name = usv(name); value = usv(value);
    var i = this.#list.findIndex(function (p) { return p[0] === name; });
    if (i < 0) this.#list.push([name, value]);
    else { this.#list[i][1] = value; this.#list = this.#list.filter(function (p, j) { return j <= i || p[0] !== name; }); }
    this.#update();
  }
  sort() {
    // Stable, by UTF-16 code units (Array.prototype.sort is stable).
    this.#list.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
    this.#update();
  }
  forEach(callback, thisArg) {
    if (typeof callback !== "function") throw new TypeError('The "callback" argument must be of type function');
    for (var i = 0; i < this.#list.length; i++) callback.call(thisArg, this.#list[i][1], this.#list[i][0], this);
  }
  keys() { return this.#list.map(function (p) { return p[0]; })[Symbol.iterator](); }
  values() { return this.#list.map(function (p) { return p[1]; })[Symbol.iterator](); }
  entries() { return this.#list.map(function (p) { return [p[0], p[1]]; })[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
  toString() { return this.#list.length ? formSerialize(stringify(this.#list)) : ""; }
}

var setSearch;
class URL {
  #p; #params = null;
  constructor(url, base) {
    if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
    var input = usv(url);
    var r = parse(input, base === undefined ? undefined : usv(base));
    if (!r) throw invalid(input);
    this.#p = r;
  }
  static {
    setSearch = function (u, text) { u.#p = parseJSON(hostSet(u.#p[HREF], "search", text)); };
  }
  static canParse(url, base) { try { return parse(usv(url), base === undefined ? undefined : usv(base)) !== null; } catch (e) { return false; } }
  static parse(url, base) { try { return new URL(url, base); } catch (e) { return null; } }
  #set(part, value) {
    this.#p = parseJSON(hostSet(this.#p[HREF], part, usv(value)));
    if (part === "search" && this.#params) relist(this.#params, this.#p[SEARCH]);
  }
  get href() { return this.#p[HREF]; }
  set href(v) {
    var r = parse(usv(v));
    if (!r) throw invalid(usv(v));
    this.#p = r;
    if (this.#params) relist(this.#params, r[SEARCH]);
  }
  get origin() { return this.#p[ORIGIN]; }
  get protocol() { return this.#p[PROTOCOL]; }
  set protocol(v) { this.#set("protocol", v); }
  get username() { return this.#p[USERNAME]; }
  set username(v) { this.#set("username", v); }
  get password() { return this.#p[PASSWORD]; }
  set password(v) { this.#set("password", v); }
  get host() { return this.#p[HOST]; }
  set host(v) { this.#set("host", v); }
  get hostname() { return this.#p[HOSTNAME]; }
  set hostname(v) { this.#set("hostname", v); }
  get port() { return this.#p[PORT]; }
  set port(v) { this.#set("port", v); }
  get pathname() { return this.#p[PATHNAME]; }
  set pathname(v) { this.#set("pathname", v); }
  get search() { return this.#p[SEARCH]; }
  set search(v) { this.#set("search", v); }
  get hash() { return this.#p[HASH]; }
  set hash(v) { this.#set("hash", v); }
  get searchParams() {
    if (!this.#params) { this.#params = new URLSearchParams(this.#p[SEARCH]); link(this.#params, this); }
    return this.#params;
  }
  toString() { return this.#p[HREF]; }
  toJSON() { return this.#p[HREF]; }
}

var defs = { URL: URL, URLSearchParams: URLSearchParams };
for (var name in defs) {
  Object.defineProperty(defs[name].prototype, Symbol.toStringTag, { value: name, configurable: true });
  Object.defineProperty(global, name, { value: defs[name], writable: true, configurable: true });
}
})`,
};
