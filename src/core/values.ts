// Turning a guest's result value into text a model reads and into JSON a script reads.
// The value is already plain data rebuilt by the host (types.ts: RunSuccess.value), so walking it runs
// no guest code; we still guard depth, width and cycles, because the host must never hang or blow its
// stack on a value the guest shaped.

const MAX_DEPTH = 32;
const MAX_ITEMS = 1_000;

/**
 * JSON for values JSON cannot hold. A tagged object `{ "$type": T, ... }` stands for:
 * - `undefined` → `{ "$type": "undefined" }`
 * - `NaN`, `Infinity`, `-Infinity`, `-0` → `{ "$type": "number", "value": "NaN" | "Infinity" | "-Infinity" | "-0" }`
 * - a bigint → `{ "$type": "bigint", "value": "123" }` (decimal digits)
 * - a Date → `{ "$type": "Date", "value": "2026-01-01T00:00:00.000Z" }` (or `"Invalid Date"`)
 * - a Map → `{ "$type": "Map", "entries": [[key, value], …] }`
 * - a Set → `{ "$type": "Set", "values": [ … ] }`
 * - a typed array → `{ "$type": "Uint8Array", "values": [ … ] }` (the constructor's name; bigint arrays as decimal strings)
 * - an ArrayBuffer → `{ "$type": "ArrayBuffer", "values": [ …bytes ] }`
 * - an Error → `{ "$type": "Error", "name": "TypeError", "message": "…" }`
 * - a guest object that itself has a `$type` key → `{ "$type": "object", "value": { … } }` (so tags stay unambiguous)
 * - a cycle (a value containing itself) → the string `"[Circular]"`; past 32 levels → `"[Depth limit]"`
 * Everything else (strings, finite numbers, booleans, null, arrays, plain objects) is itself.
 * Nothing is cut: the value is already bounded by limits.maxResultBytes, and a script reading --json
 * must get all of it (renderValue, text for a model, is the one that shortens).
 */
export function encodeValue(value: unknown): unknown {
  return encode(value, [], 0);
}

function encode(value: unknown, ancestors: object[], depth: number): unknown {
  switch (typeof value) {
    case "undefined":
      return { $type: "undefined" };
    case "bigint":
      return { $type: "bigint", value: value.toString() };
    case "number":
      if (Number.isNaN(value)) return { $type: "number", value: "NaN" };
      if (!Number.isFinite(value)) return { $type: "number", value: value > 0 ? "Infinity" : "-Infinity" };
      if (Object.is(value, -0)) return { $type: "number", value: "-0" };
      return value;
    case "string":
    case "boolean":
      return value;
    case "function":
    case "symbol":
      // Never produced by the engines (values are data); kept total so a future engine cannot crash us.
      return { $type: typeof value };
    case "object":
      break; // null, arrays, plain objects and tagged values: below
  }
  if (value === null) return null;
  const obj = value;
  if (ancestors.includes(obj)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[Depth limit]";
  const inner = [...ancestors, obj];
  const next = (v: unknown) => encode(v, inner, depth + 1);
  if (obj instanceof Date)
    return { $type: "Date", value: Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString() };
  if (obj instanceof Map) return { $type: "Map", entries: [...obj].map(([k, v]) => [next(k), next(v)]) };
  if (obj instanceof Set) return { $type: "Set", values: [...obj].map(next) };
  if (obj instanceof Error) return { $type: "Error", name: obj.name, message: obj.message };
  if (obj instanceof ArrayBuffer) return { $type: "ArrayBuffer", values: [...new Uint8Array(obj)] };
  if (ArrayBuffer.isView(obj) && !(obj instanceof DataView)) {
    const items = [...(obj as unknown as ArrayLike<number | bigint> & Iterable<number | bigint>)];
    return { $type: obj.constructor.name, values: items.map((n) => (typeof n === "bigint" ? n.toString() : n)) };
  }
  if (Array.isArray(obj)) return obj.map(next);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = next(v);
  return Object.hasOwn(obj, "$type") ? { $type: "object", value: out } : out;
}

/**
 * A short, JavaScript-flavoured rendering for a model to read: `undefined`, `NaN`, `12n`,
 * `Date(2026-…)`, `Map(1) {"a" => 1}`, `Set(2) {1, 2}`, `Uint8Array(3) [1, 2, 3]`, `TypeError: msg`.
 * Strings at the top level are quoted so the model can tell `"1"` from `1`.
 */
export function renderValue(value: unknown): string {
  return render(value, [], 0);
}

function render(value: unknown, ancestors: object[], depth: number): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "bigint":
      return `${value}n`;
    case "number":
      return Object.is(value, -0) ? "-0" : String(value);
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return String(value);
    case "function":
    case "symbol":
      return `[${typeof value}]`;
    case "object":
      break; // null, arrays, plain objects and tagged values: below
  }
  if (value === null) return "null";
  const obj = value;
  if (ancestors.includes(obj)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[…]";
  const inner = [...ancestors, obj];
  const next = (v: unknown) => render(v, inner, depth + 1);
  const list = (items: string[], total: number) =>
    (total > items.length ? [...items, `… ${total - items.length} more`] : items).join(", ");
  if (obj instanceof Date) return `Date(${Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString()})`;
  if (obj instanceof Map) {
    const items = [...obj].slice(0, MAX_ITEMS).map(([k, v]) => `${next(k)} => ${next(v)}`);
    return `Map(${obj.size}) {${list(items, obj.size)}}`;
  }
  if (obj instanceof Set) return `Set(${obj.size}) {${list([...obj].slice(0, MAX_ITEMS).map(next), obj.size)}}`;
  if (obj instanceof Error) return `${obj.name}: ${obj.message}`;
  if (obj instanceof ArrayBuffer) return `ArrayBuffer(${obj.byteLength})`;
  if (ArrayBuffer.isView(obj) && !(obj instanceof DataView)) {
    const items = [...(obj as unknown as Iterable<number | bigint>)];
    return `${obj.constructor.name}(${items.length}) [${list(
      items.slice(0, MAX_ITEMS).map((n) => next(n)),
      items.length,
    )}]`;
  }
  if (Array.isArray(obj)) return `[${list(obj.slice(0, MAX_ITEMS).map(next), obj.length)}]`;
  const entries = Object.entries(obj);
  const items = entries
    .slice(0, MAX_ITEMS)
    .map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${next(v)}`);
  return entries.length === 0 ? "{}" : `{ ${list(items, entries.length)} }`;
}
