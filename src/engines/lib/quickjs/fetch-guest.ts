// The guest side of `fetch`: Headers, Request, Response, FormData (when the runtime has none) and
// fetch() itself, written in plain JavaScript and evaluated in the user's context (so every object is
// the user realm's own) when — and only when — the run has network: the runtime family `fetch`
// (runtime/table.ts), installed like the others only when the code names it (or lazily, on first
// touch, for code that reaches the global object reflectively). It reaches the host through four
// bridge functions moved off the global object into the families' shared internals before user code
// runs (fetch.ts, installFetchBridge); each is a host call into the run's gated fetch (src/network/run-network.ts), which applies the whole policy. Bodies
// cross as base64 strings in chunks (the bridge carries data, never guest objects), so a response is
// streamed chunk by chunk through `response.body.getReader()` or read whole by text()/json()/….

export const NET_BRIDGE = {
  write: "__wasmcell_net_write",
  open: "__wasmcell_net_open",
  read: "__wasmcell_net_read",
  cancel: "__wasmcell_net_cancel",
} as const;

/** The runtime family `fetch` (runtime/table.ts): `(host, internals, global)`, the bridge in `internals.net`. */
export const FETCH_GUEST_SOURCE = String.raw`(function (host, internals, g) {
  "use strict";
  var net = internals.net;
  var bridgeWrite = net.${NET_BRIDGE.write}, bridgeOpen = net.${NET_BRIDGE.open};
  var bridgeRead = net.${NET_BRIDGE.read}, bridgeCancel = net.${NET_BRIDGE.cancel};
  var CHUNK = 49152;
  var ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  var LOOKUP = new Uint8Array(128);
  for (var i = 0; i < 64; i++) LOOKUP[ALPHA.charCodeAt(i)] = i;
  var serial = 0;

  function toBase64(u8) {
    var out = [], n = u8.length, i = 0;
    for (; i + 2 < n; i += 3) {
      var v = (u8[i] << 16) | (u8[i + 1] << 8) | u8[i + 2];
      out.push(ALPHA[v >> 18] + ALPHA[(v >> 12) & 63] + ALPHA[(v >> 6) & 63] + ALPHA[v & 63]);
    }
    if (i < n) {
      var w = (u8[i] << 16) | (i + 1 < n ? u8[i + 1] << 8 : 0);
      out.push(ALPHA[w >> 18] + ALPHA[(w >> 12) & 63] + (i + 1 < n ? ALPHA[(w >> 6) & 63] : "=") + "=");
    }
    return out.join("");
  }
  function fromBase64(s) {
    var pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
    var out = new Uint8Array((s.length / 4) * 3 - pad), o = 0;
    for (var i = 0; i < s.length; i += 4) {
      var v = (LOOKUP[s.charCodeAt(i)] << 18) | (LOOKUP[s.charCodeAt(i + 1)] << 12) |
        (LOOKUP[s.charCodeAt(i + 2)] << 6) | LOOKUP[s.charCodeAt(i + 3)];
      out[o++] = v >> 16;
      if (o < out.length) out[o++] = (v >> 8) & 255;
      if (o < out.length) out[o++] = v & 255;
    }
    return out;
  }
  function utf8(str) {
    if (typeof g.TextEncoder === "function") return new g.TextEncoder().encode(str);
    var bin = unescape(encodeURIComponent(str)), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  function fromUtf8(u8) {
    if (typeof g.TextDecoder === "function") return new g.TextDecoder().decode(u8);
    var parts = [];
    for (var i = 0; i < u8.length; i += 8192) parts.push(String.fromCharCode.apply(null, u8.subarray(i, i + 8192)));
    try { return decodeURIComponent(escape(parts.join(""))); } catch (e) { return parts.join(""); }
  }
  function concat(chunks) {
    var n = 0, i;
    for (i = 0; i < chunks.length; i++) n += chunks[i].length;
    var out = new Uint8Array(n), o = 0;
    for (i = 0; i < chunks.length; i++) { out.set(chunks[i], o); o += chunks[i].length; }
    return out;
  }
  function abortError(signal) {
    if (signal && signal.reason !== undefined) return signal.reason;
    var e = new Error("The operation was aborted.");
    e.name = "AbortError";
    return e;
  }
  function netError(e) {
    if (e && e.name === "AbortError") return e;
    return new TypeError(e && e.message ? e.message : String(e));
  }

  // The objects' state lives in "_" properties, kept out of enumeration (a WebIDL object has no own
  // enumerable properties; its attributes are accessors on the prototype).
  function conceal(o) {
    Object.keys(o).forEach(function (k) {
      if (k.charAt(0) === "_") Object.defineProperty(o, k, { value: o[k], writable: true, enumerable: false, configurable: true });
    });
  }
  // WebIDL brand checks: an attribute or operation called on an object that is not one of these
  // interfaces' own (a plain object, or one made with Object.create(Request.prototype)) throws, rather
  // than reading whatever "_" properties it has. Held here, not on the objects.
  var brands = { headers: new WeakSet(), iterator: new WeakSet(), request: new WeakSet(), response: new WeakSet() };
  function branded(set, o) { if (!set.has(o)) throw new TypeError("Illegal invocation"); }
  function isBody(o) { return brands.request.has(o) || brands.response.has(o); }
  function illegal() { return Promise.reject(new TypeError("Illegal invocation")); } // a promise-returning operation's
  var TOKEN = /^[!#$%&'*+.^_\x60|~0-9A-Za-z-]+$/;
  function Headers(init) {
    if (!(this instanceof Headers)) throw new TypeError("Headers must be called with new");
    this._list = [];
    brands.headers.add(this);
    conceal(this);
    if (init === undefined) return;
    if (init === null || (typeof init !== "object" && typeof init !== "function")) throw new TypeError("Headers: init must be an object or a list of pairs");
    // A sequence is anything with an iterator, a Headers (with its own or an overridden one) included.
    if (typeof init[Symbol.iterator] === "function") {
      for (var pair of init) {
        var p = Array.from(pair);
        if (p.length !== 2) throw new TypeError("Headers: each pair must have a name and a value");
        this.append(p[0], p[1]);
      }
    } else if (typeof init === "object") {
      for (var k of Object.keys(init)) this.append(k, init[k]);
    } else throw new TypeError("Headers: init must be an object or a list of pairs");
  }
  function headerName(name) {
    name = String(name);
    if (!TOKEN.test(name)) throw new TypeError("Headers: " + JSON.stringify(name) + " is not a valid header name");
    return name.toLowerCase();
  }
  function headerValue(value) {
    value = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    if (/[\0\r\n]/.test(value)) throw new TypeError("Headers: a header value may not contain NUL, CR or LF");
    return value;
  }
  // Headers whose guard is "immutable" (an error or redirect Response's): held here, not on the object.
  var immutable = new WeakSet();
  function mutable(h) { if (immutable.has(h)) throw new TypeError("Headers: these headers are immutable"); }
  Headers.prototype.append = function (n, v) { branded(brands.headers, this); n = headerName(n); v = headerValue(v); mutable(this); this._list.push([n, v]); };
  Headers.prototype.delete = function (n) { branded(brands.headers, this); n = headerName(n); mutable(this); this._list = this._list.filter(function (p) { return p[0] !== n; }); };
  Headers.prototype.get = function (n) {
    branded(brands.headers, this);
    n = headerName(n);
    var vs = this._list.filter(function (p) { return p[0] === n; }).map(function (p) { return p[1]; });
    return vs.length ? vs.join(", ") : null;
  };
  Headers.prototype.getSetCookie = function () {
    branded(brands.headers, this);
    return this._list.filter(function (p) { return p[0] === "set-cookie"; }).map(function (p) { return p[1]; });
  };
  Headers.prototype.has = function (n) { branded(brands.headers, this); n = headerName(n); return this._list.some(function (p) { return p[0] === n; }); };
  Headers.prototype.set = function (n, v) { branded(brands.headers, this); this.delete(n); this.append(n, v); };
  // Fetch's "sort and combine": names sorted, values joined, except set-cookie (one entry per value).
  function sortedAndCombined(h) {
    var names = [], out = [];
    h._list.forEach(function (p) { if (names.indexOf(p[0]) < 0) names.push(p[0]); });
    names.sort();
    names.forEach(function (n) {
      if (n === "set-cookie") h.getSetCookie().forEach(function (v) { out.push([n, v]); });
      else out.push([n, h.get(n)]);
    });
    return out;
  }
  // WebIDL's pair iterator: live (each step re-reads the list at its index, so a header deleted or
  // added while iterating is seen as browsers see it), with an enumerable next.
  var IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  var HeadersIterator = Object.create(IteratorPrototype);
  Object.defineProperty(HeadersIterator, "next", { writable: true, enumerable: true, configurable: true, value: function next() {
    branded(brands.iterator, this);
    var list = sortedAndCombined(this._headers);
    if (this._index >= list.length) return { value: undefined, done: true };
    var p = list[this._index++];
    return { value: this._kind === "key" ? p[0] : this._kind === "value" ? p[1] : p, done: false };
  } });
  Object.defineProperty(HeadersIterator, Symbol.toStringTag, { value: "Headers Iterator", configurable: true });
  function headersIterator(h, kind) {
    branded(brands.headers, h);
    var it = Object.create(HeadersIterator);
    it._headers = h; it._kind = kind; it._index = 0;
    brands.iterator.add(it);
    return it;
  }
  Headers.prototype.entries = function () { return headersIterator(this, "entry"); };
  Headers.prototype.keys = function () { return headersIterator(this, "key"); };
  Headers.prototype.values = function () { return headersIterator(this, "value"); };
  Headers.prototype.forEach = function (fn, self) {
    branded(brands.headers, this);
    for (var i = 0, list; i < (list = sortedAndCombined(this)).length; i++) fn.call(self, list[i][1], list[i][0], this);
  };
  Headers.prototype[Symbol.iterator] = Headers.prototype.entries;

  // FormData is this family's own (no other defines it). Never read g.FormData while installing: in a
  // lazily stubbed runtime that is the stub, which would install this family again.
  var OwnFormData = function FormData() {
    if (!(this instanceof FormData)) throw new TypeError("FormData must be called with new");
    this._list = [];
  };
  OwnFormData.prototype.append = function (n, v, filename) {
    // A Blob value becomes a File (named "blob" unless a filename is given), as FormData's entries are.
    var file = internals.formFile ? internals.formFile(v, filename) : undefined;
    this._list.push([String(n), file ? file : v instanceof Uint8Array ? { bytes: v, filename: filename || "blob" } : String(v)]);
  };
  OwnFormData.prototype.set = function (n, v, f) { this.delete(n); this.append(n, v, f); };
  OwnFormData.prototype.get = function (n) { var p = this._list.find(function (x) { return x[0] === String(n); }); return p ? p[1] : null; };
  OwnFormData.prototype.getAll = function (n) { return this._list.filter(function (x) { return x[0] === String(n); }).map(function (x) { return x[1]; }); };
  OwnFormData.prototype.has = function (n) { return this._list.some(function (x) { return x[0] === String(n); }); };
  OwnFormData.prototype.delete = function (n) { this._list = this._list.filter(function (x) { return x[0] !== String(n); }); };
  OwnFormData.prototype.entries = function () { return this._list.slice()[Symbol.iterator](); };
  OwnFormData.prototype[Symbol.iterator] = OwnFormData.prototype.entries;
  Object.defineProperty(g, "FormData", { value: OwnFormData, writable: true, configurable: true, enumerable: false });

  /** A Blob's or File's bytes (a copy), type and name, when the blob family is installed; else undefined. */
  function blobData(v) { return internals.blobData ? internals.blobData(v) : undefined; }

  /** Body init → [bytes, default content type]. */
  function extract(body) {
    if (body == null) return [null, null];
    if (typeof body === "string") return [utf8(body), "text/plain;charset=UTF-8"];
    if (body instanceof ArrayBuffer) return [new Uint8Array(body.slice(0)), null];
    if (ArrayBuffer.isView(body)) return [new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), null];
    var blob = blobData(body);
    if (blob) return [blob.bytes, blob.type || null];
    if (typeof g.URLSearchParams === "function" && body instanceof g.URLSearchParams)
      return [utf8(body.toString()), "application/x-www-form-urlencoded;charset=UTF-8"];
    if (body instanceof OwnFormData) {
      var boundary = "----wasmcell" + Math.random().toString(16).slice(2) + Math.random().toString(16).slice(2);
      var parts = [], esc = function (s) { return String(s).replace(/"/g, "%22").replace(/\r?\n|\r/g, "%0D%0A"); };
      for (var pair of body) {
        var v = pair[1], head = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + esc(pair[0]) + "\"";
        if (typeof v === "string") parts.push(utf8(head + "\r\n\r\n" + v + "\r\n"));
        else {
          var blob = blobData(v), bytes = blob ? blob.bytes : v && v.bytes ? v.bytes : v;
          var name = v && v.filename ? v.filename : blob && blob.name !== undefined ? blob.name : v && v.name ? v.name : "blob";
          var ctype = blob && blob.type ? blob.type : "application/octet-stream";
          parts.push(utf8(head + "; filename=\"" + esc(name) + "\"\r\nContent-Type: " + ctype + "\r\n\r\n"));
          parts.push(bytes instanceof Uint8Array ? bytes : utf8(String(bytes)));
          parts.push(utf8("\r\n"));
        }
      }
      // An empty FormData is an empty body (as WPT's response-consume-empty expects), not a lone boundary.
      if (parts.length) parts.push(utf8("--" + boundary + "--\r\n"));
      return [concat(parts), "multipart/form-data; boundary=" + boundary];
    }
    if (body instanceof Body) throw new TypeError("fetch: pass the body's bytes, not a Request or Response");
    return [utf8(String(body)), "text/plain;charset=UTF-8"];
  }

  /** A body: bytes already here, or a host stream read chunk by chunk. */
  function Body() {}
  function initBody(self, bytes, stream) {
    self._bytes = bytes;
    self._stream = stream;
    self._bodyUsed = false;
    if (!("_signal" in self)) self._signal = null;
    conceal(self);
  }
  function takeReader(self) {
    if (self._bodyUsed) throw new TypeError("the body has already been read");
    var bytes = self._bytes, stream = self._stream, done = false;
    // bodyUsed says a body was read; a null body (no bytes, no stream) stays unused.
    if (bytes !== null || stream) self._bodyUsed = true;
    return {
      read: function () {
        if (self._signal && self._signal.aborted) { done = true; return Promise.reject(abortError(self._signal)); }
        if (done) return Promise.resolve({ done: true, value: undefined });
        if (!stream) {
          done = true;
          return Promise.resolve(bytes && bytes.length ? { done: false, value: bytes } : { done: true, value: undefined });
        }
        return bridgeRead(stream).then(function (b64) {
          if (b64 === null) { done = true; return { done: true, value: undefined }; }
          return { done: false, value: fromBase64(b64) };
        }, function (e) {
          done = true;
          throw self._signal && self._signal.aborted ? abortError(self._signal) : netError(e);
        });
      },
      cancel: function () { done = true; if (stream) bridgeCancel(stream); return Promise.resolve(); },
      releaseLock: function () {},
      closed: Promise.resolve(),
    };
  }
  Object.defineProperty(Body.prototype, "body", {
    enumerable: true,
    configurable: true,
    get: function () {
      if (!isBody(this)) throw new TypeError("Illegal invocation");
      if (this._bytes === null && !this._stream) return null;
      var self = this, reader = null;
      var getReader = function () { reader = reader || takeReader(self); return reader; };
      var stream = { getReader: getReader, cancel: function () { return getReader().cancel(); } };
      stream[Symbol.asyncIterator] = function () {
        var r = getReader();
        return { next: function () { return r.read(); }, return: function () { return r.cancel().then(function () { return { done: true }; }); } };
      };
      Object.defineProperty(stream, "locked", { get: function () { return reader !== null; } });
      return stream;
    },
  });
  // The body mixin's operations read the body through consume(), not through this.bytes(): a WebIDL
  // operation does not dispatch to what a program put on the object, and a foreign "this" rejects.
  function consume(self) {
    var reader;
    if (!isBody(self)) return illegal();
    try { reader = takeReader(self); } catch (e) { return Promise.reject(e); }
    var chunks = [];
    var pump = function () {
      return reader.read().then(function (r) { if (r.done) return concat(chunks); chunks.push(r.value); return pump(); });
    };
    return pump();
  }
  Body.prototype.arrayBuffer = function () { return consume(this).then(function (u8) { return u8.buffer; }); };
  Body.prototype.bytes = function () { return consume(this); };
  Body.prototype.text = function () { return consume(this).then(fromUtf8); };
  Body.prototype.json = function () { return consume(this).then(function (u8) { return JSON.parse(fromUtf8(u8)); }); };
  // blob() needs the Blob family, which a program that names Blob gets (runtime/table.ts).
  function needBlob(what) {
    if (!internals.makeBlob) void g.Blob; // a lazily stubbed family installs on first touch
    if (!internals.makeBlob) throw new TypeError(what + ": this program has no Blob (name Blob in the code to get it)");
  }
  Body.prototype.blob = function () {
    if (!isBody(this)) return illegal();
    try { needBlob("blob()"); } catch (e) { return Promise.reject(e); }
    var type = this._headers.get("content-type") || "";
    return consume(this).then(function (u8) { return internals.makeBlob(u8, type); });
  };
  // formData(): an urlencoded or a multipart/form-data body as FormData entries (a multipart file part
  // becomes a File); anything else is a TypeError, after the body was read, as Fetch says.
  Body.prototype.formData = function () {
    if (!isBody(this)) return illegal();
    var type = this._headers.get("content-type") || "", lower = type.toLowerCase();
    var multipart = /^multipart\/form-data\s*;/.test(lower);
    var urlencoded = /^application\/x-www-form-urlencoded\s*(;|$)/.test(lower) && typeof g.URLSearchParams === "function";
    return consume(this).then(function (u8) {
      var fd = new OwnFormData();
      if (urlencoded) new g.URLSearchParams(fromUtf8(u8)).forEach(function (v, k) { fd.append(k, v); });
      else if (multipart) parseMultipart(u8, type).forEach(function (e) { fd.append.apply(fd, e); });
      else throw new TypeError("formData(): the body is neither multipart/form-data nor application/x-www-form-urlencoded");
      return fd;
    });
  };
  // multipart/form-data (RFC 7578) → [name, value] or [name, File, filename] entries. The body is read
  // as a byte string so that positions are byte offsets; every part is a view of the body's bytes.
  function parseMultipart(u8, type) {
    var m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type), bad = "formData(): the multipart body is malformed";
    if (!m) throw new TypeError("formData(): the multipart content type has no boundary");
    var chunks = [], i;
    for (i = 0; i < u8.length; i += 8192) chunks.push(String.fromCharCode.apply(null, u8.subarray(i, i + 8192)));
    var bin = chunks.join("");
    var delim = "--" + (m[1] || m[2]), out = [], pos = bin.indexOf(delim);
    if (pos < 0) throw new TypeError(bad);
    pos += delim.length;
    while (bin.substr(pos, 2) !== "--") {
      if (bin.substr(pos, 2) !== "\r\n") throw new TypeError(bad);
      var headEnd = bin.indexOf("\r\n\r\n", pos + 2), next = headEnd < 0 ? -1 : bin.indexOf("\r\n" + delim, headEnd + 4);
      if (next < 0) throw new TypeError(bad);
      var head = fromUtf8(u8.subarray(pos + 2, headEnd)), name = null, filename = null, ctype = "";
      head.split("\r\n").forEach(function (line) {
        var c = line.indexOf(":"), key = line.slice(0, c).trim().toLowerCase(), value = line.slice(c + 1).trim();
        if (key === "content-type") ctype = value;
        if (key !== "content-disposition" || !/^form-data\s*(;|$)/i.test(value)) return;
        var n = /;\s*name="([^"]*)"/i.exec(value), f = /;\s*filename="([^"]*)"/i.exec(value);
        if (n) name = n[1];
        if (f) filename = f[1];
      });
      if (name === null) throw new TypeError(bad);
      var bytes = u8.slice(headEnd + 4, next);
      if (filename === null) out.push([name, fromUtf8(bytes)]);
      else {
        needBlob("formData()");
        out.push([name, internals.makeBlob(bytes, ctype || "text/plain"), filename]);
      }
      pos = next + 2 + delim.length;
    }
    return out;
  }

  var REQUEST_ENUMS = ["mode", "credentials", "cache", "redirect", "referrerPolicy"];
  var REQUEST_DEFAULTS = { mode: "cors", credentials: "same-origin", cache: "default", redirect: "follow", referrerPolicy: "" };
  var ENUM_VALUES = {
    mode: ["navigate", "same-origin", "no-cors", "cors"],
    credentials: ["omit", "same-origin", "include"],
    cache: ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"],
    redirect: ["follow", "manual", "error"],
    referrerPolicy: ["", "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin",
      "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"],
  };
  // A Request's signal is always an AbortSignal of its own that follows the one given (as Fetch's
  // "dependent signal"): an AbortSignal through AbortSignal.any, an AbortSignal-like object (a
  // polyfill's) through its abort event; anything else is a TypeError.
  var AbortSignalClass = g.AbortSignal, AbortControllerClass = g.AbortController;
  function followSignal(s) {
    if (s != null && AbortSignalClass && s instanceof AbortSignalClass) return AbortSignalClass.any([s]);
    if (s != null && (typeof s !== "object" || typeof s.addEventListener !== "function")) throw new TypeError("Request: signal must be an AbortSignal");
    if (!AbortControllerClass) return s || null;
    var c = new AbortControllerClass();
    if (s && s.aborted) c.abort(s.reason);
    else if (s) s.addEventListener("abort", function () { c.abort(s.reason); });
    return c.signal;
  }

  function Request(input, init) {
    if (!(this instanceof Request)) throw new TypeError("Request must be called with new");
    init = init || {};
    var base = brands.request.has(input) ? input : null;
    var url = base ? base.url : String(input && input.href !== undefined ? input.href : input);
    // A relative URL resolves against globalThis.location.href when the program sets one (as Deno's
    // --location does); the box itself has no base URL, so otherwise it is a TypeError.
    var loc = g.location, baseHref = loc && typeof loc.href === "string" ? loc.href : undefined;
    if (typeof g.URL === "function") url = new g.URL(url, baseHref).href;
    this._url = url;
    this._method = String(init.method || (base ? base.method : "GET")).toUpperCase();
    this._headers = new Headers(init.headers || (base ? base.headers : undefined));
    // RequestInit's enumerations: a value outside one is a TypeError; what is not given comes from the
    // input Request or is Fetch's default. The box reports them and does not act on them (no CORS, no
    // cookies, no HTTP cache here), except redirect, which the host's fetch follows.
    var self = this;
    REQUEST_ENUMS.forEach(function (k) {
      var v = init[k] !== undefined ? String(init[k]) : base ? base["_" + k] : REQUEST_DEFAULTS[k];
      if (ENUM_VALUES[k].indexOf(v) < 0 || (k === "mode" && v === "navigate" && init[k] !== undefined))
        throw new TypeError("Request: " + JSON.stringify(v) + " is not a valid value for " + k);
      self["_" + k] = k === "mode" && v === "navigate" ? "same-origin" : v;
    });
    if (this._cache === "only-if-cached" && this._mode !== "same-origin") throw new TypeError("Request: cache mode 'only-if-cached' needs mode 'same-origin'");
    this._integrity = init.integrity !== undefined ? String(init.integrity) : base ? base._integrity : "";
    this._keepalive = init.keepalive !== undefined ? !!init.keepalive : base ? base._keepalive : false;
    this._signal = followSignal(init.signal !== undefined ? init.signal : base ? base._signal : null);
    brands.request.add(this);
    var body = init.body !== undefined ? extract(init.body) : [base ? base._bytes : null, null];
    if (body[0] && (this._method === "GET" || this._method === "HEAD")) throw new TypeError("Request with GET/HEAD method cannot have body");
    if (body[1] && !this._headers.has("content-type")) this._headers.set("content-type", body[1]);
    initBody(this, body[0], null);
  }
  Request.prototype = Object.create(Body.prototype);
  Request.prototype.constructor = Request;
  Request.prototype.clone = function () {
    branded(brands.request, this);
    if (this._bodyUsed) throw new TypeError("Request.clone: the body has already been read");
    return new Request(this);
  };
  // WebIDL attributes: read-only accessors on the prototypes over the object's state. What the box
  // does not model (a request's mode, credentials, cache, referrer, ...) reports Fetch's default.
  function attributes(proto, check, names, constants) {
    names.forEach(function (n) {
      Object.defineProperty(proto, n, { get: function () { check(this); return this["_" + n]; }, enumerable: true, configurable: true });
    });
    Object.keys(constants || {}).forEach(function (n) {
      var v = constants[n];
      Object.defineProperty(proto, n, { get: function () { check(this); return v; }, enumerable: true, configurable: true });
    });
  }
  attributes(Body.prototype, function (o) { if (!isBody(o)) throw new TypeError("Illegal invocation"); }, ["bodyUsed"]);
  attributes(Request.prototype, function (o) { branded(brands.request, o); }, REQUEST_ENUMS.concat(["method", "url", "headers", "signal", "integrity", "keepalive"]), {
    destination: "", referrer: "about:client", isReloadNavigation: false, isHistoryNavigation: false, duplex: "half",
  });

  function Response(body, init) {
    if (!(this instanceof Response)) throw new TypeError("Response must be called with new");
    init = init || {};
    var extracted = extract(body);
    var status = init.status === undefined ? 200 : init.status | 0;
    if (status < 200 || status > 599) throw new RangeError("Response: status must be 200 to 599");
    if (extracted[0] !== null && NULL_BODY_STATUS.indexOf(status) >= 0) throw new TypeError("Response: a " + status + " response cannot have a body");
    this._status = status;
    this._statusText = init.statusText === undefined ? "" : String(init.statusText);
    this._headers = new Headers(init.headers);
    if (extracted[1] && !this._headers.has("content-type")) this._headers.set("content-type", extracted[1]);
    this._url = "";
    this._redirected = false;
    this._type = "default";
    brands.response.add(this);
    initBody(this, extracted[0], null);
  }
  Response.prototype = Object.create(Body.prototype);
  Response.prototype.constructor = Response;
  attributes(Response.prototype, function (o) { branded(brands.response, o); }, ["type", "url", "redirected", "status", "statusText", "headers"]);
  Object.defineProperty(Response.prototype, "ok", { get: function () { branded(brands.response, this); return this._status >= 200 && this._status < 300; }, enumerable: true, configurable: true });
  Response.prototype.clone = function () {
    branded(brands.response, this);
    if (this._stream) throw new TypeError("Response.clone: read the body first (a streamed body cannot be cloned here)");
    var r = new Response(this._bytes, { status: this.status, statusText: this.statusText, headers: this.headers });
    r._url = this._url;
    return r;
  };
  var NULL_BODY_STATUS = [101, 103, 204, 205, 304], REDIRECT_STATUS = [301, 302, 303, 307, 308];
  // The static methods as Fetch defines them (names and lengths included: WebIDL static operations).
  var statics = {
    json: function json(data) {
      var init = arguments[1], text = JSON.stringify(data); // its errors propagate
      if (text === undefined) throw new TypeError("Response.json: the data cannot be serialized as JSON");
      var r = new Response(text, init);
      r.headers.set("content-type", (init && init.headers && new Headers(init.headers).get("content-type")) || "application/json");
      return r;
    },
    error: function error() {
      var r = new Response(null, { status: 200 });
      r._status = 0; r._type = "error";
      immutable.add(r.headers);
      return r;
    },
    redirect: function redirect(url) {
      var status = arguments.length > 1 && arguments[1] !== undefined ? +arguments[1] : 302;
      var href = String(url);
      if (typeof g.URL === "function") {
        try { href = new g.URL(href).href; } catch (e) { throw new TypeError("Response.redirect: " + JSON.stringify(href) + " is not a valid URL"); }
      }
      if (REDIRECT_STATUS.indexOf(status) < 0) throw new RangeError("Response.redirect: " + status + " is not a redirect status");
      var r = new Response(null, { status: status, headers: { location: href } });
      immutable.add(r.headers);
      return r;
    },
  };
  Object.keys(statics).forEach(function (k) {
    Object.defineProperty(Response, k, { value: statics[k], writable: true, enumerable: true, configurable: true });
  });

  function fetch(input, init) {
    return new Promise(function (resolve, reject) {
      var req = new Request(input, init);
      var signal = req.signal;
      if (signal && signal.aborted) throw abortError(signal);
      var id = ++serial, settled = false;
      var onAbort = function () {
        if (settled) return;
        settled = true;
        bridgeCancel(id);
        reject(abortError(signal));
      };
      if (signal && typeof signal.addEventListener === "function") signal.addEventListener("abort", onAbort);
      var bytes = req._bytes, writes = [];
      if (bytes) for (var o = 0; o < bytes.length; o += CHUNK) writes.push(bridgeWrite(id, toBase64(bytes.subarray(o, o + CHUNK))));
      Promise.all(writes).then(function () {
        return bridgeOpen(id, { url: req.url, method: req.method, headers: req.headers._list, redirect: req.redirect });
      }).then(function (head) {
        if (settled) { bridgeCancel(id); return; }
        settled = true;
        // Whatever throws while the Response is built (a status or header the constructor refuses)
        // rejects this fetch: nothing else would ever settle it.
        try {
          // The stream is attached here, never through an init option a program could pass itself.
          var res = new Response(null, { status: head.status, statusText: head.statusText, headers: head.headers });
          res._stream = id;
          res._url = head.url;
          res._redirected = head.redirected;
          res._type = "basic";
          res._signal = signal;
          if (signal && typeof signal.addEventListener === "function")
            signal.addEventListener("abort", function () { bridgeCancel(id); });
          resolve(res);
        } catch (e) {
          bridgeCancel(id);
          reject(netError(e));
        }
      }, function (e) {
        if (settled) return;
        settled = true;
        reject(netError(e));
      });
    });
  }

  var define = function (name, value) {
    Object.defineProperty(g, name, { value: value, writable: true, configurable: true, enumerable: false });
  };
  // Their class strings are the interfaces' names (WebIDL), which also makes structuredClone refuse them.
  [["Headers", Headers], ["Request", Request], ["Response", Response]].forEach(function (d) {
    Object.defineProperty(d[1].prototype, Symbol.toStringTag, { value: d[0], configurable: true });
    define(d[0], d[1]);
  });
  define("fetch", fetch);
})
`;
