// A result value as text a model reads: short, JavaScript-flavoured. The value is already plain data
// rebuilt by the host (RunSuccess.value), so walking it runs no guest code; depth, width and cycles are
// still guarded, because the host must never hang or blow its stack on a value the guest shaped.

const MAX_DEPTH = 32;
const MAX_ITEMS = 1_000;

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
