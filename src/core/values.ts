// A result value as JSON and back: encodeValue turns the plain data a run returns (RunSuccess.value)
// into tagged JSON a script reads (the CLI's --json, a queue reply), decodeValue rebuilds it.
// Encoding walks data the host rebuilt (no guest code runs) but still guards depth and cycles: the host
// must never hang or blow its stack on a value the guest shaped. Decoding reads JSON that crossed a
// machine boundary, so it is untrusted: depth and width are bounded, an unknown tag or a malformed one
// is an error (the caller turns it into a `crashed` result), and nothing is looked up by a name the
// JSON chose except from the closed table of typed-array constructors.

const ENCODE_MAX_DEPTH = 32;

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
  if (depth >= ENCODE_MAX_DEPTH) return "[Depth limit]";
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

const DECODE_MAX_DEPTH = 64;
const DECODE_MAX_ITEMS = 1_000_000;

const TYPED: Record<string, (items: unknown[]) => unknown> = {
  Int8Array: (v) => Int8Array.from(v as number[]),
  Uint8Array: (v) => Uint8Array.from(v as number[]),
  Uint8ClampedArray: (v) => Uint8ClampedArray.from(v as number[]),
  Int16Array: (v) => Int16Array.from(v as number[]),
  Uint16Array: (v) => Uint16Array.from(v as number[]),
  Int32Array: (v) => Int32Array.from(v as number[]),
  Uint32Array: (v) => Uint32Array.from(v as number[]),
  Float32Array: (v) => Float32Array.from(v as number[]),
  Float64Array: (v) => Float64Array.from(v as number[]),
  BigInt64Array: (v) => BigInt64Array.from((v as string[]).map((s) => BigInt(s))),
  BigUint64Array: (v) => BigUint64Array.from((v as string[]).map((s) => BigInt(s))),
};

export class ValueShapeError extends Error {}

export function decodeValue(json: unknown): unknown {
  let items = 0;
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > DECODE_MAX_DEPTH) throw new ValueShapeError(`the value nests deeper than ${DECODE_MAX_DEPTH} levels`);
    if (++items > DECODE_MAX_ITEMS) throw new ValueShapeError(`the value holds more than ${DECODE_MAX_ITEMS} items`);
    if (v === null || typeof v === "string" || typeof v === "boolean") return v;
    if (typeof v === "number") return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    if (typeof v !== "object") throw new ValueShapeError(`unexpected ${typeof v} in the value`);
    const o = v as Record<string, unknown>;
    if (!Object.hasOwn(o, "$type")) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) {
        define(out, k, walk(x, depth + 1));
      }
      return out;
    }
    return tagged(o, (x) => walk(x, depth + 1));
  };
  return walk(json, 0);
}

function tagged(o: Record<string, unknown>, next: (v: unknown) => unknown): unknown {
  const type = o["$type"];
  const list = (key: string): unknown[] => {
    const v = o[key];
    if (!Array.isArray(v)) throw new ValueShapeError(`a ${String(type)} value needs an array "${key}"`);
    return v;
  };
  const text = (): string => {
    const v = o["value"];
    if (typeof v !== "string") throw new ValueShapeError(`a ${String(type)} value needs a string "value"`);
    return v;
  };
  switch (type) {
    case "undefined":
      return undefined;
    case "function":
    case "symbol":
      return `[${type}]`;
    case "number": {
      const special: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity, "-0": -0 };
      const s = text();
      if (!Object.hasOwn(special, s)) throw new ValueShapeError(`"${s.slice(0, 20)}" is not a special number`);
      return special[s];
    }
    case "bigint": {
      const s = text();
      if (!/^-?\d{1,10000}$/.test(s)) throw new ValueShapeError("a bigint value must be decimal digits");
      return BigInt(s);
    }
    case "Date": {
      const s = text();
      return new Date(s === "Invalid Date" ? NaN : s);
    }
    case "Map":
      return new Map(
        list("entries").map((e) => {
          if (!Array.isArray(e) || e.length !== 2) throw new ValueShapeError("a Map entry must be [key, value]");
          return [next(e[0]), next(e[1])] as const;
        }),
      );
    case "Set":
      return new Set(list("values").map(next));
    case "Error": {
      const error = new Error(typeof o["message"] === "string" ? o["message"] : "");
      if (typeof o["name"] === "string") error.name = o["name"];
      return error;
    }
    case "ArrayBuffer":
      return Uint8Array.from(bytes(list("values"))).buffer;
    case "object": {
      const inner = o["value"];
      if (typeof inner !== "object" || inner === null || Array.isArray(inner))
        throw new ValueShapeError('an "object" value needs an object "value"');
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(inner)) define(out, k, next(x));
      return out;
    }
    default: {
      const build = typeof type === "string" && Object.hasOwn(TYPED, type) ? TYPED[type] : undefined;
      if (!build) throw new ValueShapeError(`unknown value tag ${JSON.stringify(type)?.slice(0, 40)}`);
      const values = list("values");
      const big = type === "BigInt64Array" || type === "BigUint64Array";
      if (!values.every((n) => (big ? typeof n === "string" && /^-?\d{1,30}$/.test(n) : typeof n === "number")))
        throw new ValueShapeError(`a ${String(type)} holds only ${big ? "decimal strings" : "numbers"}`);
      return build(values);
    }
  }
}

function bytes(values: unknown[]): number[] {
  if (!values.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 255))
    throw new ValueShapeError("an ArrayBuffer holds bytes (0..255)");
  return values as number[];
}

/** defineProperty, not assignment: a "__proto__" key stays a plain key and sets no prototype. */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}
