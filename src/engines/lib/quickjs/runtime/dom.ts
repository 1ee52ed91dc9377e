// DOMException, Event, CustomEvent, EventTarget, AbortController and AbortSignal, in guest JS: pure
// state machines, nothing to ask the host except that AbortSignal.timeout's timer must not keep the
// run alive by itself (Node unrefs it too): `host.unref(id)` marks it so.

import type { FamilySource } from "./family.ts";

export const dom: FamilySource = {
  bindings: { unref: { params: ["number"], fn: (p, id: number) => p.unrefTimer(id) } },
  source: String.raw`(function (host, internals, global) {
"use strict";
var setTimeoutFn = global.setTimeout, clearTimeoutFn = global.clearTimeout, unref = host.unref;
var CODES = { IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12,
  InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18,
  NetworkError: 19, AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23,
  InvalidNodeTypeError: 24, DataCloneError: 25 };

class DOMException extends Error {
  #name; #code;
  constructor(message, options) {
    super(message === undefined ? "" : String(message));
    var name = "Error";
    if (options !== null && typeof options === "object") { if (options.name !== undefined) name = String(options.name); }
    else if (options !== undefined) name = String(options);
    this.#name = name;
    this.#code = CODES[name] || 0;
  }
  get name() { return this.#name; }
  get code() { return this.#code; }
}
Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
// WebIDL's 25 constants in code order, the legacy codes no name maps to any more included.
["INDEX_SIZE_ERR", "DOMSTRING_SIZE_ERR", "HIERARCHY_REQUEST_ERR", "WRONG_DOCUMENT_ERR", "INVALID_CHARACTER_ERR",
  "NO_DATA_ALLOWED_ERR", "NO_MODIFICATION_ALLOWED_ERR", "NOT_FOUND_ERR", "NOT_SUPPORTED_ERR", "INUSE_ATTRIBUTE_ERR",
  "INVALID_STATE_ERR", "SYNTAX_ERR", "INVALID_MODIFICATION_ERR", "NAMESPACE_ERR", "INVALID_ACCESS_ERR", "VALIDATION_ERR",
  "TYPE_MISMATCH_ERR", "SECURITY_ERR", "NETWORK_ERR", "ABORT_ERR", "URL_MISMATCH_ERR", "QUOTA_EXCEEDED_ERR", "TIMEOUT_ERR",
  "INVALID_NODE_TYPE_ERR", "DATA_CLONE_ERR"].forEach(function (constName, i) {
  Object.defineProperty(DOMException, constName, { value: i + 1, enumerable: true });
});
// WebIDL attributes are enumerable accessors on the prototype (brand-checked: reading one off the
// prototype throws).
Object.defineProperty(DOMException.prototype, "name", { enumerable: true });
Object.defineProperty(DOMException.prototype, "code", { enumerable: true });
internals.DOMException = DOMException;

var dispatching;
class Event {
  #type; #bubbles; #cancelable; #composed; #prevented = false; #stopped = false; #target = null;
  #current = null; #phase = 0; #time; #passive = false;
  constructor(type, init) {
    if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
    init = init == null ? {} : init;
    this.#type = String(type);
    this.#bubbles = !!init.bubbles; this.#cancelable = !!init.cancelable; this.#composed = !!init.composed;
    this.#time = Date.now() - timeOrigin;
  }
  get type() { return this.#type; }
  get bubbles() { return this.#bubbles; }
  get cancelable() { return this.#cancelable; }
  get composed() { return this.#composed; }
  get defaultPrevented() { return this.#cancelable && this.#prevented; }
  get returnValue() { return !this.defaultPrevented; }
  get target() { return this.#target; }
  get currentTarget() { return this.#current; }
  get srcElement() { return this.#target; }
  get eventPhase() { return this.#phase; }
  get timeStamp() { return this.#time; }
  get isTrusted() { return false; }
  get cancelBubble() { return this.#stopped; }
  set cancelBubble(v) { if (v) this.#stopped = true; }
  composedPath() { return this.#current ? [this.#current] : []; }
  preventDefault() { if (!this.#passive) this.#prevented = true; }
  stopPropagation() {}
  stopImmediatePropagation() { this.#stopped = true; }
  static {
    dispatching = {
      begin: function (e, target) { if (e.#phase !== 0) return false; e.#target = target; e.#current = target; e.#phase = 2; e.#stopped = false; return true; },
      end: function (e) { e.#current = null; e.#phase = 0; e.#passive = false; },
      passive: function (e, p) { e.#passive = p; },
      stopped: function (e) { return e.#stopped; },
    };
  }
}
var timeOrigin = Date.now();
Event.NONE = 0; Event.CAPTURING_PHASE = 1; Event.AT_TARGET = 2; Event.BUBBLING_PHASE = 3;

class CustomEvent extends Event {
  #detail;
  constructor(type, init) {
    if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
    super(type, init);
    this.#detail = init != null && init.detail !== undefined ? init.detail : null;
  }
  get detail() { return this.#detail; }
}

class EventTarget {
  #listeners = new Map();
  addEventListener(type, callback, options) {
    // The options are converted before a null callback returns: a bad signal throws either way.
    var o = typeof options === "boolean" ? { capture: options } : options == null ? {} : options;
    var capture = !!o.capture, signal = o.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('The "options.signal" property must be an instance of AbortSignal');
    if (callback == null) return;
    if (signal && signal.aborted) return;
    type = String(type);
    var list = this.#listeners.get(type);
    if (!list) this.#listeners.set(type, list = []);
    for (var i = 0; i < list.length; i++) if (list[i].callback === callback && list[i].capture === capture) return;
    list.push({ callback: callback, capture: capture, once: !!o.once, passive: !!o.passive, removed: false });
    if (signal) { var self = this; signal.addEventListener("abort", function () { self.removeEventListener(type, callback, { capture: capture }); }, { once: true }); }
  }
  removeEventListener(type, callback, options) {
    var capture = typeof options === "boolean" ? options : !!(options && options.capture);
    var list = this.#listeners.get(String(type));
    if (!list) return;
    for (var i = 0; i < list.length; i++) if (list[i].callback === callback && list[i].capture === capture) {
      list[i].removed = true; list.splice(i, 1); return;
    }
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError('The "event" argument must be an instance of Event. Received ' + (event === null ? "null" : typeof event));
    if (!dispatching.begin(event, this)) throw new DOMException("The event is already being dispatched", "InvalidStateError");
    var list = this.#listeners.get(event.type), failure, failed = false;
    try {
      if (list) {
        // At the target, capturing listeners run before the others (DOM "inner invoke", capture phase first).
        var copy = list.filter(function (l) { return l.capture; }).concat(list.filter(function (l) { return !l.capture; }));
        for (var i = 0; i < copy.length; i++) {
          var l = copy[i];
          if (l.removed) continue;
          if (l.once) this.removeEventListener(event.type, l.callback, { capture: l.capture });
          dispatching.passive(event, l.passive);
          try {
            if (typeof l.callback === "function") l.callback.call(this, event);
            else if (l.callback && typeof l.callback.handleEvent === "function") l.callback.handleEvent(event);
          } catch (e) { if (!failed) { failed = true; failure = e; } }
          dispatching.passive(event, false);
          if (dispatching.stopped(event)) break;
        }
      }
    } finally { dispatching.end(event); }
    // A listener's exception does not stop the others; the first one is rethrown after all ran.
    if (failed) throw failure;
    return !event.defaultPrevented;
  }
}

var token = {};
class AbortSignal extends EventTarget {
  #aborted = false; #reason = undefined; #onabort = null;
  constructor(key) { if (key !== token) throw new TypeError("Illegal constructor"); super(); }
  get aborted() { return this.#aborted; }
  get reason() { return this.#reason; }
  get onabort() { return this.#onabort; }
  set onabort(fn) {
    if (this.#onabort) this.removeEventListener("abort", this.#onabort);
    this.#onabort = typeof fn === "function" ? fn : null;
    if (this.#onabort) this.addEventListener("abort", this.#onabort);
  }
  throwIfAborted() { if (this.#aborted) throw this.#reason; }
  static abort(reason) { var s = new AbortSignal(token); s.#abort(reason); return s; }
  static timeout(ms) {
    ms = Number(ms);
    if (!(ms >= 0 && ms <= 4294967295)) throw new RangeError('The value of "delay" is out of range. It must be >= 0 && <= 4294967295. Received ' + ms);
    var s = new AbortSignal(token);
    var id = setTimeoutFn(function () { s.#abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")); }, ms);
    unref(id);
    return s;
  }
  static any(signals) {
    var s = new AbortSignal(token), list = [];
    for (var x of signals) {
      if (!(x instanceof AbortSignal)) throw new TypeError('The "signals" argument must be an instance of AbortSignal[]');
      list.push(x);
    }
    for (var i = 0; i < list.length; i++) if (list[i].aborted) { s.#abort(list[i].reason); return s; }
    for (var j = 0; j < list.length; j++) list[j].addEventListener("abort", function (e) { s.#abort(e.target.reason); }, { once: true });
    return s;
  }
  static _abort(s, reason) { s.#abort(reason); }
  #abort(reason) {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
    this.dispatchEvent(new Event("abort"));
  }
}
var abortSignal = AbortSignal._abort;
delete AbortSignal._abort;

class AbortController {
  #signal = new AbortSignal(token);
  get signal() { return this.#signal; }
  abort(reason) { abortSignal(this.#signal, reason); }
}

var defs = { DOMException: DOMException, Event: Event, CustomEvent: CustomEvent, EventTarget: EventTarget,
  AbortController: AbortController, AbortSignal: AbortSignal };
for (var name in defs) {
  Object.defineProperty(defs[name].prototype, Symbol.toStringTag, { value: name, configurable: true });
  Object.defineProperty(global, name, { value: defs[name], writable: true, configurable: true });
}
})`,
};
