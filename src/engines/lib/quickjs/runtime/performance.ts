// `performance`, in guest JS over Date.now(): time comes from the host's clock (QuickJS's Date reads
// it), in whole milliseconds and never backwards. Deliberately no finer than Date.now() already is —
// a high-resolution timer is what timing side channels need, and agent code needs only durations.

import type { FamilySource } from "./family.ts";

export const performance: FamilySource = {
  source: String.raw`(function (host, internals, global) {
"use strict";
var origin = Date.now(), last = 0;
class Performance {
  constructor(key) { if (key !== origin) throw new TypeError("Illegal constructor"); }
  get timeOrigin() { return origin; }
  now() { var t = Date.now() - origin; if (t > last) last = t; return last; }
  toJSON() { return { timeOrigin: origin }; }
}
Object.defineProperty(Performance.prototype, Symbol.toStringTag, { value: "Performance", configurable: true });
Object.defineProperty(global, "performance", { value: new Performance(origin), writable: true, configurable: true, enumerable: true });
})`,
};
