// Host side of the result transport: rebuilds plain data from the JSON text the service realm produced
// (see the encoding in service.ts). Everything built here is a fresh host object with no getters,
// proxies or prototypes other than the standard ones: guest code never runs in the host.

type Tagged = null | boolean | number | string | Tagged[];

const TYPED_ARRAYS: Record<string, new (items: number[]) => ArrayLike<number>> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
};

/** Parses the service realm's JSON text into host data. Throws only on a malformed text (an engine bug). */
export function decodeValue(text: string): unknown {
  // "=": plain JSON (JSON.parse makes a "__proto__" key an own property, never a prototype).
  if (text.startsWith("=")) return JSON.parse(text.slice(1)) as unknown;
  return decode(JSON.parse(text) as Tagged);
}

function special(name: unknown): number {
  switch (name) {
    case "NaN":
      return NaN;
    case "Infinity":
      return Infinity;
    case "-Infinity":
      return -Infinity;
    default:
      return -0;
  }
}

function decode(t: Tagged): unknown {
  if (!Array.isArray(t)) return t;
  const tag = t[0];
  switch (tag) {
    case "u":
      return undefined;
    case "n":
      return special(t[1]);
    case "b":
      return BigInt(String(t[1]));
    case "y":
      return String(t[1]);
    case "f":
      return `[Function: ${String(t[1]) || "(anonymous)"}]`;
    case "c":
      return "[Circular]";
    case "x":
      return "[Depth limit]";
    case "p":
      return "[Promise]";
    case "a": {
      const out: unknown[] = new Array(t.length - 1);
      for (let i = 1; i < t.length; i++) out[i - 1] = decode(t[i] as Tagged);
      return out;
    }
    case "o": {
      const out: Record<string, unknown> = {};
      for (let i = 1; i + 1 < t.length; i += 2) {
        const key = String(t[i]);
        const value = decode(t[i + 1] as Tagged);
        // A key named __proto__ must become an own property, not a prototype change.
        if (key === "__proto__")
          Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
        else out[key] = value;
      }
      return out;
    }
    case "m": {
      const out = new Map<unknown, unknown>();
      for (let i = 1; i + 1 < t.length; i += 2) out.set(decode(t[i] as Tagged), decode(t[i + 1] as Tagged));
      return out;
    }
    case "s": {
      const out = new Set<unknown>();
      for (let i = 1; i < t.length; i++) out.add(decode(t[i] as Tagged));
      return out;
    }
    case "d":
      return new Date(typeof t[1] === "number" ? t[1] : NaN);
    case "t": {
      const type = String(t[1]);
      const items = t.slice(2).map((x) => (Array.isArray(x) ? special(x[1]) : x));
      if (type === "ArrayBuffer") return new Uint8Array(items as number[]).buffer;
      if (type === "BigInt64Array") return new BigInt64Array(items.map((x) => BigInt(String(x))));
      if (type === "BigUint64Array") return new BigUint64Array(items.map((x) => BigInt(String(x))));
      const Ctor = TYPED_ARRAYS[type];
      return Ctor ? new Ctor(items as number[]) : items;
    }
    case "e": {
      const error = new Error(String(t[2] ?? ""));
      error.name = String(t[1] ?? "Error");
      // QuickJS stacks hold only the frames; Node's convention starts with "Name: message".
      error.stack = `${error.name}: ${error.message}\n${String(t[3] ?? "")}`.trimEnd();
      return error;
    }
    default:
      throw new Error(`wasmcell: malformed value from the guest (tag ${JSON.stringify(tag)})`);
  }
}
