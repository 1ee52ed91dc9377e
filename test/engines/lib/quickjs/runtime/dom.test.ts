// DOMException, Event, EventTarget, AbortController and AbortSignal against Node's (WPT dom/events, dom/abort).
import { describe } from "node:test";
import { parity } from "./parity.ts";

describe("events and abort behave like Node's", () => {
  parity([
    [
      "DOMException",
      `(() => { const e = new DOMException("m", "AbortError"); return [e.name, e.message, e.code, e instanceof Error, DOMException.ABORT_ERR, new DOMException().name, Object.prototype.toString.call(e)]; })()`,
    ],
    [
      "Event fields",
      `(() => { const e = new Event("x", { cancelable: true, bubbles: true }); const r = [e.type, e.bubbles, e.cancelable, e.defaultPrevented, e.eventPhase, e.target, e.isTrusted]; e.preventDefault(); r.push(e.defaultPrevented); return r; })()`,
    ],
    ["Event needs a type", `new Event()`],
    [
      "non-cancelable events ignore preventDefault",
      `(() => { const e = new Event("x"); e.preventDefault(); return e.defaultPrevented; })()`,
    ],
    [
      "dispatch order, once, handleEvent and duplicates",
      `(() => { const t = new EventTarget(), seen = []; const f = (e) => seen.push("f:" + e.type + ":" + (e.target === t) + ":" + (e.currentTarget === t)); t.addEventListener("a", f); t.addEventListener("a", f); t.addEventListener("a", { handleEvent(e) { seen.push("obj"); } }); t.addEventListener("a", () => seen.push("once"), { once: true }); t.dispatchEvent(new Event("a")); t.dispatchEvent(new Event("a")); t.removeEventListener("a", f); t.dispatchEvent(new Event("a")); return seen; })()`,
    ],
    [
      "dispatchEvent returns !defaultPrevented",
      `(() => { const t = new EventTarget(); t.addEventListener("x", (e) => e.preventDefault()); return [t.dispatchEvent(new Event("x", { cancelable: true })), t.dispatchEvent(new Event("x"))]; })()`,
    ],
    [
      "stopImmediatePropagation stops later listeners",
      `(() => { const t = new EventTarget(), seen = []; t.addEventListener("x", (e) => { seen.push(1); e.stopImmediatePropagation(); }); t.addEventListener("x", () => seen.push(2)); t.dispatchEvent(new Event("x")); return seen; })()`,
    ],
    [
      "a listener removed during dispatch does not run",
      `(() => { const t = new EventTarget(), seen = []; const b = () => seen.push("b"); t.addEventListener("x", () => { seen.push("a"); t.removeEventListener("x", b); }); t.addEventListener("x", b); t.dispatchEvent(new Event("x")); return seen; })()`,
    ],
    ["dispatching a non-event is a TypeError", `new EventTarget().dispatchEvent({ type: "x" })`],
    [
      "CustomEvent detail",
      `[new CustomEvent("c", { detail: { a: 1 } }).detail, new CustomEvent("c").detail, new CustomEvent("c") instanceof Event]`,
    ],
    [
      "AbortController aborts once with a reason",
      `(() => { const c = new AbortController(), seen = []; c.signal.addEventListener("abort", (e) => seen.push(e.type)); c.signal.onabort = () => seen.push("on"); c.abort("why"); c.abort("again"); return [c.signal.aborted, c.signal.reason, seen]; })()`,
    ],
    [
      "default reason is an AbortError DOMException",
      `(() => { const c = new AbortController(); c.abort(); return [c.signal.reason instanceof DOMException, c.signal.reason.name, c.signal.reason.message]; })()`,
    ],
    [
      "throwIfAborted",
      `(() => { const c = new AbortController(); c.signal.throwIfAborted(); c.abort(new RangeError("r")); c.signal.throwIfAborted(); })()`,
    ],
    [
      "AbortSignal.abort",
      `[AbortSignal.abort().aborted, AbortSignal.abort(5).reason, AbortSignal.abort().reason.name]`,
    ],
    ["AbortSignal cannot be constructed", `new AbortSignal()`],
    [
      "AbortSignal.timeout fires TimeoutError",
      `(async () => { const s = AbortSignal.timeout(5); const before = s.aborted; await new Promise((r) => s.addEventListener("abort", r)); return [before, s.aborted, s.reason.name, s.reason.message]; })()`,
    ],
    ["AbortSignal.timeout range", `AbortSignal.timeout(-1)`],
    [
      "AbortSignal.any follows the first",
      `(() => { const a = new AbortController(), b = new AbortController(); const s = AbortSignal.any([a.signal, b.signal]); const before = s.aborted; b.abort("b"); a.abort("a"); return [before, s.aborted, s.reason, AbortSignal.any([AbortSignal.abort("x")]).reason]; })()`,
    ],
    [
      "signal option removes the listener",
      `(() => { const t = new EventTarget(), c = new AbortController(), seen = []; t.addEventListener("x", () => seen.push(1), { signal: c.signal }); t.dispatchEvent(new Event("x")); c.abort(); t.dispatchEvent(new Event("x")); return seen; })()`,
    ],
    [
      "toStringTag",
      `[Object.prototype.toString.call(new EventTarget()), Object.prototype.toString.call(new AbortController()), String(new Event("x"))]`,
    ],
  ]);
});
