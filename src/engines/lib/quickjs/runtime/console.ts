// The rest of `console` (assert, table, time/timeEnd/timeLog, count/countReset, group/groupEnd,
// trace), in guest JS over the host-backed console.log/warn/error the engine installs (guest.ts), so
// every line still goes through the run's output caps and the service realm's formatter. The only host
// state is the group indentation, which the host applies to each printed line.

import type { FamilySource } from "./family.ts";

export const console: FamilySource = {
  bindings: { indent: { params: ["number"], fn: (p, n: number) => p.setIndent(n) } },
  source: String.raw`(function (host, internals, global) {
"use strict";
var c = global.console;
if (!c) return;
var log = c.log, warn = c.warn, error = c.error, setIndent = host.indent;
var counts = new Map(), timers = new Map(), depth = 0;
var now = function () { return Date.now(); };

function labelOf(label) { return label === undefined ? "default" : "" + label; }
function formatTime(ms) {
  if (ms >= 3600000) { var h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, s = (ms / 1000) % 60;
    return h + ":" + (m < 10 ? "0" : "") + m + ":" + (s < 10 ? "0" : "") + s.toFixed(3) + " (h:mm:ss.mmm)"; }
  if (ms >= 60000) { var mm = Math.floor(ms / 60000), ss = (ms / 1000) % 60;
    return mm + ":" + (ss < 10 ? "0" : "") + ss.toFixed(3) + " (m:ss.mmm)"; }
  if (ms >= 1000) return (ms / 1000).toFixed(3) + "s";
  return ms.toFixed(3) + "ms";
}

var methods = {
  assert: function assert(condition) {
    if (condition) return;
    var rest = Array.prototype.slice.call(arguments, 1);
    if (typeof rest[0] === "string") { rest[0] = "Assertion failed: " + rest[0]; error.apply(c, rest); }
    else error.apply(c, ["Assertion failed"].concat(rest));
  },
  count: function count(label) {
    label = labelOf(label);
    var n = (counts.get(label) || 0) + 1;
    counts.set(label, n);
    log.call(c, label + ": " + n);
  },
  countReset: function countReset(label) {
    label = labelOf(label);
    if (!counts.has(label)) { warn.call(c, "Warning: Count for '" + label + "' does not exist"); return; }
    counts.delete(label);
  },
  time: function time(label) {
    label = labelOf(label);
    if (timers.has(label)) { warn.call(c, "Warning: Label '" + label + "' already exists for console.time()"); return; }
    timers.set(label, now());
  },
  timeEnd: function timeEnd(label) {
    label = labelOf(label);
    if (!timers.has(label)) { warn.call(c, "Warning: No such label '" + label + "' for console.timeEnd()"); return; }
    log.call(c, label + ": " + formatTime(now() - timers.get(label)));
    timers.delete(label);
  },
  timeLog: function timeLog(label) {
    label = labelOf(label);
    if (!timers.has(label)) { warn.call(c, "Warning: No such label '" + label + "' for console.timeLog()"); return; }
    var args = [label + ": " + formatTime(now() - timers.get(label))].concat(Array.prototype.slice.call(arguments, 1));
    log.apply(c, args);
  },
  group: function group() {
    if (arguments.length) log.apply(c, arguments);
    depth++; setIndent(depth * 2);
  },
  groupCollapsed: function groupCollapsed() {
    if (arguments.length) log.apply(c, arguments);
    depth++; setIndent(depth * 2);
  },
  groupEnd: function groupEnd() {
    if (depth > 0) depth--;
    setIndent(depth * 2);
  },
  trace: function trace() {
    var args = Array.prototype.slice.call(arguments);
    if (typeof args[0] === "string") args[0] = "Trace: " + args[0];
    else args.unshift(args.length ? "Trace:" : "Trace");
    error.apply(c, args);
    var stack = (new Error().stack || "").split("\n").filter(function (l) { return l.trim() !== "" && l.indexOf("wasmcell:") < 0; });
    if (stack.length) error.call(c, stack.join("\n"));
  },
  table: function table(data, properties) {
    if (data === null || typeof data !== "object") { log.call(c, data); return; }
    log.call(c, renderTable(data, properties));
  },
};
for (var name in methods) Object.defineProperty(c, name, { value: methods[name], writable: true, enumerable: true, configurable: true });

// --- console.table, in Node's layout -----------------------------------------------------------
function cell(v, nested) {
  var t = typeof v;
  if (t === "string") return v.indexOf("'") < 0 ? "'" + v + "'" : v.indexOf('"') < 0 ? '"' + v + '"' : "'" + v.replace(/'/g, "\\'") + "'";
  if (t === "number") return v === 0 && 1 / v < 0 ? "-0" : "" + v;
  if (t === "bigint") return v + "n";
  if (t === "symbol") return v.toString();
  if (t === "function") return "[Function: " + (v.name || "(anonymous)") + "]";
  if (v === null || t !== "object") return "" + v;
  if (nested) return Array.isArray(v) ? "[Array]" : "[Object]";
  if (Array.isArray(v)) return v.length ? "[ " + v.slice(0, 3).map(function (x) { return cell(x, true); }).join(", ") + (v.length > 3 ? ", ... " + (v.length - 3) + " more items" : "") + " ]" : "[]";
  if (v instanceof Date) return isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
  var ks = Object.keys(v);
  return ks.length ? "{ " + ks.map(function (k) { return k + ": " + cell(v[k], true); }).join(", ") + " }" : "{}";
}
function renderTable(data, properties) {
  var isMap = data instanceof Map, isSet = data instanceof Set;
  var rows = [];
  if (isMap) { var i = 0; data.forEach(function (v, k) { rows.push([String(i++), v, k]); }); }
  else if (isSet) { var j = 0; data.forEach(function (v) { rows.push([String(j++), v]); }); }
  else Object.keys(data).forEach(function (k) { rows.push([k, data[k]]); });
  var columns = [], hasValues = false, seen = new Set();
  rows.forEach(function (r) {
    var v = r[1];
    if (!isMap && !isSet && v !== null && typeof v === "object" && !(v instanceof Date)) {
      Object.keys(v).forEach(function (k) { if (!seen.has(k)) { seen.add(k); columns.push(k); } });
    } else hasValues = true;
  });
  if (Array.isArray(properties)) columns = properties.map(String);
  var head = [isMap || isSet ? "(iteration index)" : "(index)"];
  if (isMap) head.push("Key");
  head = head.concat(columns);
  if (hasValues || isMap || isSet) head.push("Values");
  var body = rows.map(function (r) {
    var v = r[1], line = [r[0]];
    if (isMap) line.push(cell(r[2], false));
    var obj = !isMap && !isSet && v !== null && typeof v === "object" && !(v instanceof Date);
    columns.forEach(function (k) { line.push(obj && Object.prototype.hasOwnProperty.call(v, k) ? cell(v[k], false) : ""); });
    if (hasValues || isMap || isSet) line.push(obj ? "" : cell(v, false));
    return line;
  });
  var widths = head.map(function (h, i) {
    var w = h.length;
    body.forEach(function (b) { if (b[i].length > w) w = b[i].length; });
    return w + 2;
  });
  function row(cells) { return "│" + cells.map(function (x, i) { return " " + x + " ".repeat(widths[i] - x.length - 1); }).join("│") + "│"; }
  function rule(l, m, r) { return l + widths.map(function (w) { return "─".repeat(w); }).join(m) + r; }
  return [rule("┌", "┬", "┐"), row(head), rule("├", "┼", "┤")].concat(body.map(row), [rule("└", "┴", "┘")]).join("\n");
}
})`,
};
