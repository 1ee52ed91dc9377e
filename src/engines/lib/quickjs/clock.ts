// The box's clock is UTC. QuickJS computes every local-time answer (getTimezoneOffset, getHours,
// toString, `new Date(y, m, d)`, parsing a date without an offset) from libc's localtime_r, which
// Emscripten implements as a JavaScript import that asks the *host's* Date: the host's time zone
// (TZ, /etc/localtime) would leak into the guest and tell it where the host runs. So before the
// module is instantiated its local-time imports are replaced with ones that answer for UTC.
//
// The imports are found by what they do (their source asks the host's Date for a time zone offset),
// not by their minified names; an import that does so and is not recognised fails the load, so a
// new QuickJS build cannot bring the host's time zone back silently.

export type Imports = Record<string, Record<string, unknown>>;

/** Linear memory, as much of it as this file writes. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

// The TS libs this project uses carry no WebAssembly declarations; this is the little we touch.
export interface WasmApi {
  compile(bytes: ArrayBuffer | Uint8Array): Promise<object>;
  instantiate(module: object, imports: Imports): Promise<{ exports: object }>;
}
export const WASM = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const DAY_MS = 86_400_000;

/** Rewrites the module's imports in place so local time is UTC. Throws if they are not as expected. */
export function pinClockToUtc(imports: Imports): void {
  let memory: WasmMemory | undefined;
  for (const fields of Object.values(imports))
    for (const value of Object.values(fields)) if (isMemory(value)) memory = value;
  if (!memory) throw new Error("QuickJS module: no imported memory to write local time into");
  const mem = memory;
  const found = new Set<string>();
  for (const fields of Object.values(imports)) {
    for (const [name, value] of Object.entries(fields)) {
      if (typeof value !== "function") continue;
      const source = Function.prototype.toString.call(value);
      if (!source.includes("getTimezoneOffset")) continue;
      if (source.includes("getSeconds")) {
        fields[name] = (time: bigint | number, tm: number) => localtimeUtc(mem, time, tm);
        found.add("localtime");
      } else if (source.includes("padStart")) {
        fields[name] = (timezone: number, daylight: number, stdName: number, dstName: number) =>
          tzsetUtc(mem, timezone, daylight, stdName, dstName);
        found.add("tzset");
      } else {
        throw new Error(`QuickJS module: import ${name} reads the host's time zone and is not known`);
      }
    }
  }
  if (!found.has("localtime")) throw new Error("QuickJS module: its localtime import was not found");
}

/** True for a linear memory from any realm (edge-runtime runs the engine in a realm of its own). */
function isMemory(value: unknown): value is WasmMemory {
  return Object.prototype.toString.call(value) === "[object WebAssembly.Memory]";
}

/** `struct tm` for a time in seconds, as UTC: offset 0, no daylight saving. */
function localtimeUtc(memory: WasmMemory, time: bigint | number, tm: number): void {
  const seconds = Number(time);
  const date = new Date(Math.abs(seconds) <= 8.64e12 ? seconds * 1000 : NaN);
  const year = date.getUTCFullYear();
  const heap = new Int32Array(memory.buffer);
  const at = tm >> 2;
  heap[at] = date.getUTCSeconds();
  heap[at + 1] = date.getUTCMinutes();
  heap[at + 2] = date.getUTCHours();
  heap[at + 3] = date.getUTCDate();
  heap[at + 4] = date.getUTCMonth();
  heap[at + 5] = year - 1900;
  heap[at + 6] = date.getUTCDay();
  heap[at + 7] = Math.floor((date.getTime() - Date.UTC(year, 0, 1)) / DAY_MS) | 0; // tm_yday
  heap[at + 8] = 0; // tm_isdst
  heap[at + 9] = 0; // tm_gmtoff
}

/** tzset: `timezone` 0, `daylight` 0, both names "UTC". */
function tzsetUtc(memory: WasmMemory, timezone: number, daylight: number, stdName: number, dstName: number) {
  const words = new Int32Array(memory.buffer);
  words[timezone >> 2] = 0;
  words[daylight >> 2] = 0;
  const bytes = new Uint8Array(memory.buffer);
  for (const at of [stdName, dstName]) bytes.set([0x55, 0x54, 0x43, 0], at); // "UTC\0"
}
